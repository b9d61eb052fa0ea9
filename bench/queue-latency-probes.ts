/**
 * The two probes of bench/queue-latency.ts. Both time "approval → the next agent spawned":
 *   PipelineProbe: the real path. Orchestrator.command(approve) on an awaiting run (lock
 *     re-taken, ledger appended, projections written, job enqueued) → the in-process worker
 *     claims the job → agent spawned (runAgent's onSpawn, i.e. the child's 'spawn' event).
 *   FloorProbe: only the unavoidable work: one fsynced ledger append, the driver's enqueue, the
 *     worker's pick-up, spawning the same agent (the child's 'spawn' event).
 * Each offers `sample` (a run with instant agents, one after another), and `cycle` (one cycle of
 * the busy-bridge scenario: agents that work for a while, an approval after a delay).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { BridgeDb } from '../src/db/connection.ts';
import { createRepositories } from '../src/db/repositories/index.ts';
import type { Layout } from '../src/engine/model.ts';
import { DEMO_AGENT_SCRIPT } from '../src/jobs/orchestrator/agent-resolver.ts';
import { Orchestrator } from '../src/jobs/orchestrator/orchestrator.ts';
import type { JobQueue } from '../src/jobs/queue/port.ts';
import { lowerPriority } from '../src/jobs/runner/spawn.ts';
import { createLogger } from '../src/log.ts';
import type { CyclePlan, SlotPlan } from './queue-latency-scenario.ts';

/** `demo` (examples/demo-agent.mjs, a Node process) or `light` (`cat`). */
export type AgentKind = 'demo' | 'light';

/** What both probes are opened with. */
export interface ProbeOptions {
  readonly agent: AgentKind;
  readonly layout: Layout;
  /** Worker slots (the number of runs at once: no job waits for a free slot). */
  readonly concurrency: number;
  /** Agents run this much below our CPU priority (PHASEBRIDGE_AGENT_NICE), in both probes. */
  readonly nice: number;
  /** The scenario's slots (each gets its own workflow, with its agents' durations). */
  readonly slots: readonly SlotPlan[];
  /** Told of each pipeline sample (`--stages`): its run, ms, and when the spawn was heard. */
  readonly onSample?: (runId: string, ms: number, end: number) => void;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** The demo agent's behaviour line: work `ms`, with a progress line half-way. */
const demoLine = (ms: number) => `demo: sleep=${ms} progress=1`;

function workflowYaml(id: string, agent: AgentKind, first: string, second: string): string {
  return `id: ${id}
steps:
  - id: a
    agent: ${agent}
    prompt: "${first}"
    checkpoint:
      when: after
  - id: b
    agent: ${agent}
    prompt: "${second}"
`;
}

/** The real path: approve → spawn of the next step's agent, through the Orchestrator. */
export class PipelineProbe {
  #spawned = new Map<string, (t: number) => void>();
  #n = 0;
  private constructor(
    readonly o: Orchestrator,
    readonly workspace: string,
    readonly layout: Layout,
    readonly onSample?: (runId: string, ms: number, end: number) => void,
  ) {}

  static async open(
    db: BridgeDb,
    queue: JobQueue,
    dir: string,
    opts: ProbeOptions,
  ): Promise<PipelineProbe> {
    const workspace = path.join(dir, 'ws');
    const flows = path.join(workspace, 'workflows');
    fs.mkdirSync(flows, { recursive: true });
    fs.writeFileSync(
      path.join(flows, 'latency.workflow.yaml'),
      workflowYaml('latency', opts.agent, 'first', 'second'),
    );
    for (const s of opts.slots) {
      const yaml = workflowYaml(
        `latency-${s.slot}`,
        opts.agent,
        `first\\n${demoLine(s.firstMs)}`,
        `second\\n${demoLine(s.secondMs)}`,
      );
      fs.writeFileSync(path.join(flows, `latency-${s.slot}.workflow.yaml`), yaml);
    }
    if (opts.agent === 'light') {
      await createRepositories(db).agents.add({ name: 'light', engine: 'command', argv: ['cat'] });
    }
    let probe: PipelineProbe | undefined;
    const o = await Orchestrator.create({
      db,
      queue,
      log: createLogger({ level: 'silent' }),
      home: path.join(dir, 'home'),
      worker: { concurrency: opts.concurrency },
      agentNice: opts.nice,
      onAgentSpawn: ({ jobId }) => probe?.spawned(jobId, performance.now()),
    });
    probe = new PipelineProbe(o, workspace, opts.layout, opts.onSample);
    return probe;
  }

  /** Reports the spawn of a job's agent. */
  spawned(jobId: string, at: number): void {
    this.#spawned.get(jobId)?.(at);
  }

  /** One sample with instant agents: a run to its checkpoint (untimed), then approve → spawn. */
  sample(): Promise<number> {
    return this.#timed('latency', 0);
  }

  /** One cycle of the busy-bridge scenario for `plan.slot`; returns approve → spawn (ms). */
  cycle(plan: CyclePlan): Promise<number> {
    return this.#timed(`latency-${plan.slot}`, plan.approveAfterMs);
  }

  async #timed(workflow: string, approveAfterMs: number): Promise<number> {
    const actor = { id: 'bench' };
    const run = await this.o.startRun({
      workflow,
      workspace: this.workspace,
      spec: `latency ${this.#n++}`,
      actor,
      layout: this.layout,
    });
    const idle = await this.o.waitUntilIdle(run.id);
    if (idle.status !== 'awaiting') throw new Error(`run ${run.id} is ${idle.status}`);
    if (approveAfterMs > 0) await sleep(approveAfterMs);
    const jobId = `${run.id}:b:1`;
    const spawned = new Promise<number>((resolve) => this.#spawned.set(jobId, resolve));
    const t0 = performance.now();
    const r = await this.o.command(run.id, `bench:${run.id}`, {
      type: 'answerCheckpoint',
      answer: 'approve',
      actor,
    });
    if (!r.ok) throw new Error(r.rejection.message);
    const t1 = await spawned;
    this.#spawned.delete(jobId);
    this.onSample?.(run.id, t1 - t0, t1);
    const end = await this.o.waitUntilIdle(run.id);
    if (end.status !== 'completed') throw new Error(`run ended ${end.status}`);
    return t1 - t0;
  }

  close(): Promise<void> {
    return this.o.close();
  }
}

/** The floor: fsynced append, enqueue, pick-up, spawn of the same agent. */
export class FloorProbe {
  #waiting = new Map<string, (t: number) => void>();
  #done = new Map<string, () => void>();
  #n = 0;
  private constructor(
    readonly queue: JobQueue,
    readonly fd: number,
  ) {}

  static async open(queue: JobQueue, dir: string, opts: ProbeOptions): Promise<FloorProbe> {
    fs.mkdirSync(dir, { recursive: true });
    const fd = fs.openSync(path.join(dir, 'floor-ledger.jsonl'), 'a', 0o600);
    const probe = new FloorProbe(queue, fd);
    const argv: [string, string[]] =
      opts.agent === 'light' ? ['cat', []] : [process.execPath, [DEMO_AGENT_SCRIPT]];
    queue.onOutcome((id) => {
      probe.#done.get(id)?.();
      probe.#done.delete(id);
    });
    await queue.startWorker(
      (job) =>
        new Promise((resolve) => {
          const child = spawn(argv[0], argv[1], { cwd: dir, detached: true, stdio: 'pipe' });
          if (child.pid !== undefined) lowerPriority(child.pid, opts.nice);
          child.once('spawn', () => {
            probe.#waiting.get(job.id)?.(performance.now());
            child.stdin?.end(String(job.payload.prompt ?? 'floor'));
          });
          child.stdout?.resume();
          child.stderr?.resume();
          child.once('exit', () => resolve({ ok: true }));
        }),
      { concurrency: opts.concurrency },
    );
    return probe;
  }

  /** One sample with an instant agent. */
  sample(): Promise<number> {
    return this.#timed(`2026-01-01T000000Z-floor-${this.#n++}`, 'floor');
  }

  /** One cycle of the scenario: the first agent works, the approval waits, then timed. */
  async cycle(plan: CyclePlan): Promise<number> {
    const runId = `2026-01-01T000000Z-floor-${this.#n++}`;
    await this.#run({
      runId,
      stepId: 'a',
      attempt: 1,
      payload: { prompt: demoLine(plan.firstMs) },
    });
    await sleep(plan.approveAfterMs);
    return this.#timed(runId, demoLine(plan.secondMs));
  }

  /** Approve → spawn of the floor: fsynced append, enqueue, pick-up, spawn. */
  async #timed(runId: string, prompt: string): Promise<number> {
    const jobId = `${runId}:b:1`;
    const spawned = new Promise<number>((resolve) => this.#waiting.set(jobId, resolve));
    const done = new Promise<void>((resolve) => this.#done.set(jobId, resolve));
    const t0 = performance.now();
    fs.writeSync(
      this.fd,
      `${JSON.stringify({ runId, type: 'checkpointResolved', at: new Date().toISOString() })}\n`,
    );
    fs.fsyncSync(this.fd);
    await this.queue.enqueue({ runId, stepId: 'b', attempt: 1, payload: { prompt } });
    const t1 = await spawned;
    this.#waiting.delete(jobId);
    await done;
    return t1 - t0;
  }

  /** Enqueues a job and waits for its outcome (the untimed first step). */
  async #run(job: { runId: string; stepId: string; attempt: number; payload: object }) {
    const jobId = `${job.runId}:${job.stepId}:${job.attempt}`;
    const done = new Promise<void>((resolve) => this.#done.set(jobId, resolve));
    await this.queue.enqueue({ ...job, payload: { ...job.payload } });
    await done;
  }

  close(): void {
    fs.closeSync(this.fd);
  }
}

/** N loops of `sample` at once until `total` samples (the stress mode). */
export async function saturate(
  probe: { sample(): Promise<number> },
  n: number,
  total: number,
): Promise<number[]> {
  const out: number[] = [];
  await Promise.all(
    Array.from({ length: n }, async () => {
      while (out.length < total) out.push(await probe.sample());
    }),
  );
  return out.slice(0, total);
}
