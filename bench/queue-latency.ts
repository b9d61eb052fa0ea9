/**
 * Benchmark: checkpoint approval → the next step's agent process started, per queue driver.
 *   pipeline: Orchestrator.command(approve) on an awaiting run (lock re-taken, ledger appended,
 *             projections written, job enqueued) → in-process worker claims the job → agent
 *             spawned (runAgent's onSpawn, i.e. the child's 'spawn' event).
 *   floor:    only the unavoidable work: one fsynced ledger append, the driver's enqueue, the
 *             worker's pick-up, spawning the same agent (the child's 'spawn' event).
 * Samples of both are interleaved (one of each per round) so load changes hit both alike; the
 * first WARMUP of each are dropped. Drivers: sqlite always; bullmq when redis-server (or
 * REDIS_URL) is available, on a private redis-server. Prints one JSON object.
 *
 * `--concurrent N` (N > 1): N runs at once, each looping start → checkpoint → approve →
 * completed, so every approval lands among N busy runs (worker slots: N, so no job waits for a
 * free slot); the floor runs N loops of its samples the same way. Rounds of 2N samples of each
 * alternate; the first round is warm-up.
 *
 * Run: npx tsx bench/queue-latency.ts [--runs 200] [--layout native|codemachine] [--concurrent 50]
 *      [--agent demo|light] [--drivers sqlite,bullmq]
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BridgeDb, migrateToLatest, openBridgeDb } from '../src/db/connection.ts';
import { createRepositories } from '../src/db/repositories/index.ts';
import type { Layout } from '../src/engine/model.ts';
import { DEMO_AGENT_SCRIPT } from '../src/jobs/orchestrator/agent-resolver.ts';
import { Orchestrator } from '../src/jobs/orchestrator/orchestrator.ts';
import { createJobQueue, type QueueConfig } from '../src/jobs/queue/create-queue.ts';
import type { JobQueue } from '../src/jobs/queue/port.ts';
import { createLogger } from '../src/log.ts';
import { redisAvailable, startRedis } from '../test/support/redis.ts';

const WARMUP = 10;
const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const arg = (name: string): string | undefined => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const RUNS = Number(arg('runs') ?? 200);
const LAYOUT = (arg('layout') ?? 'native') as Layout;
const CONCURRENT = Number(arg('concurrent') ?? 1);
const DRIVERS = (arg('drivers') ?? 'sqlite,bullmq').split(',');
/**
 * The agent spawned: `demo` (examples/demo-agent.mjs, a Node process) or `light` (`cat`: the
 * prompt in, the same out, exit 0), which leaves the queue's own cost visible when 50 agents
 * at once would otherwise measure how fast two cores start Node processes.
 */
const AGENT = arg('agent') === 'light' ? 'light' : 'demo';
const AGENT_ARGV: [string, string[]] =
  AGENT === 'light' ? ['cat', []] : [process.execPath, [DEMO_AGENT_SCRIPT]];
process.env.DEMO_AGENT_BEHAVIOUR = 'sleep=0';

const WORKFLOW = `id: latency
steps:
  - id: a
    agent: ${AGENT}
    prompt: first
    checkpoint:
      when: after
  - id: b
    agent: ${AGENT}
    prompt: second
`;

/** p50/p99/mean/max of samples (ms, 2 decimals). */
function stats(samples: number[]) {
  const s = [...samples].sort((x, y) => x - y);
  const at = (q: number) => s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)]!;
  const r = (v: number) => Number(v.toFixed(2));
  const mean = s.reduce((a, b) => a + b, 0) / s.length;
  return {
    n: s.length,
    p50: r(at(0.5)),
    p90: r(at(0.9)),
    p99: r(at(0.99)),
    mean: r(mean),
    max: r(s.at(-1)!),
  };
}

/** The real path: approve → spawn of the next step's agent, through the Orchestrator. */
class PipelineProbe {
  #spawned = new Map<string, (t: number) => void>();
  #n = 0;
  private constructor(
    readonly o: Orchestrator,
    readonly workspace: string,
  ) {}

  static async open(db: BridgeDb, queue: JobQueue, dir: string): Promise<PipelineProbe> {
    const workspace = path.join(dir, 'ws');
    fs.mkdirSync(path.join(workspace, 'workflows'), { recursive: true });
    fs.writeFileSync(path.join(workspace, 'workflows', 'latency.workflow.yaml'), WORKFLOW);
    if (AGENT === 'light') {
      await createRepositories(db).agents.add({ name: 'light', engine: 'command', argv: ['cat'] });
    }
    let probe: PipelineProbe | undefined;
    const o = await Orchestrator.create({
      db,
      queue,
      log: createLogger({ level: 'silent' }),
      home: path.join(dir, 'home'),
      worker: { concurrency: CONCURRENT },
      onAgentSpawn: ({ jobId }) => probe?.spawned(jobId, performance.now()),
    });
    probe = new PipelineProbe(o, workspace);
    return probe;
  }

  /** Reports the spawn of a job's agent. */
  spawned(jobId: string, at: number): void {
    this.#spawned.get(jobId)?.(at);
  }

  /** One sample: a run to its checkpoint (untimed), then approve → spawn of step b (timed). */
  async sample(): Promise<number> {
    const actor = { id: 'bench' };
    const run = await this.o.startRun({
      workflow: 'latency',
      workspace: this.workspace,
      spec: `latency ${this.#n++}`,
      actor,
      layout: LAYOUT,
    });
    await this.o.waitUntilIdle(run.id);
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
    const end = await this.o.waitUntilIdle(run.id);
    if (end.status !== 'completed') throw new Error(`run ended ${end.status}`);
    return t1 - t0;
  }

  /**
   * N runs at once, each looping on its own (start → checkpoint → approve, timed until step b's
   * agent spawns → completed) until `total` samples: approvals arrive while the other runs
   * commit, queue and spawn, as with N busy runs on one bridge.
   */
  async concurrent(n: number, total: number): Promise<number[]> {
    const out: number[] = [];
    await Promise.all(
      Array.from({ length: n }, async () => {
        while (out.length < total) out.push(await this.sample());
      }),
    );
    return out.slice(0, total);
  }

  close(): Promise<void> {
    return this.o.close();
  }
}

/** The floor: fsynced append, enqueue, pick-up, spawn of the same agent. */
class FloorProbe {
  #waiting = new Map<string, (t: number) => void>();
  #n = 0;
  private constructor(
    readonly queue: JobQueue,
    readonly fd: number,
    readonly cwd: string,
  ) {}

  static async open(queue: JobQueue, dir: string): Promise<FloorProbe> {
    const fd = fs.openSync(path.join(dir, 'floor-ledger.jsonl'), 'a', 0o600);
    const probe = new FloorProbe(queue, fd, dir);
    await queue.startWorker(
      (job) =>
        new Promise((resolve) => {
          const child = spawn(AGENT_ARGV[0], AGENT_ARGV[1], {
            cwd: dir,
            detached: true,
            stdio: ['pipe', 'pipe', 'pipe'],
          });
          child.once('spawn', () => {
            probe.#waiting.get(job.id)?.(performance.now());
            child.stdin?.end('floor');
          });
          child.stdout?.resume();
          child.stderr?.resume();
          child.once('exit', () => resolve({ ok: true }));
        }),
      { concurrency: CONCURRENT },
    );
    return probe;
  }

  async sample(): Promise<number> {
    const runId = `2026-01-01T000000Z-floor-${this.#n++}`;
    const spawned = new Promise<number>((resolve) => this.#waiting.set(`${runId}:b:1`, resolve));
    const done = new Promise<void>((resolve) => {
      const off = this.queue.onOutcome((id) => {
        if (id === `${runId}:b:1`) {
          off();
          resolve();
        }
      });
    });
    const t0 = performance.now();
    fs.writeSync(
      this.fd,
      `${JSON.stringify({ runId, type: 'checkpointResolved', at: new Date().toISOString() })}\n`,
    );
    fs.fsyncSync(this.fd);
    await this.queue.enqueue({ runId, stepId: 'b', attempt: 1, payload: {} });
    const t1 = await spawned;
    await done;
    return t1 - t0;
  }

  /** N loops of floor samples at once, until `total` samples. */
  async concurrent(n: number, total: number): Promise<number[]> {
    const out: number[] = [];
    await Promise.all(
      Array.from({ length: n }, async () => {
        while (out.length < total) out.push(await this.sample());
      }),
    );
    return out.slice(0, total);
  }

  close(): void {
    fs.closeSync(this.fd);
  }
}

async function measure(
  name: string,
  config: (db: BridgeDb, part: string) => QueueConfig,
  dir: string,
) {
  const open = async (part: string) => {
    const db = openBridgeDb({ file: path.join(dir, part, 'bridge.db') });
    await migrateToLatest(db);
    return { db, queue: await createJobQueue(config(db, part)) };
  };
  const real = await open('pipeline');
  const base = await open('floor');
  const pipeline = await PipelineProbe.open(real.db, real.queue, path.join(dir, 'pipeline'));
  const floor = await FloorProbe.open(base.queue, path.join(dir, 'floor'));
  const p: number[] = [];
  const f: number[] = [];
  try {
    if (CONCURRENT > 1) {
      // Rounds of pipeline then floor, so load changes hit both; the first round warms up.
      const perRound = CONCURRENT * 2;
      const rounds = Math.ceil(RUNS / perRound);
      for (let i = 0; i <= rounds; i++) {
        const a = await pipeline.concurrent(CONCURRENT, perRound);
        const b = await floor.concurrent(CONCURRENT, perRound);
        if (i > 0) {
          p.push(...a);
          f.push(...b);
        }
      }
    } else {
      for (let i = 0; i < RUNS + WARMUP; i++) {
        const a = await pipeline.sample();
        const b = await floor.sample();
        if (i >= WARMUP) {
          p.push(a);
          f.push(b);
        }
      }
    }
  } finally {
    await pipeline.close();
    floor.close();
    for (const part of [real, base]) {
      await part.queue.close();
      await part.db.close();
    }
  }
  const ps = stats(p);
  const fs_ = stats(f);
  return {
    driver: name,
    pipeline: ps,
    floor: fs_,
    ratio: {
      p50: Number((ps.p50 / fs_.p50).toFixed(2)),
      p99: Number((ps.p99 / fs_.p99).toFixed(2)),
    },
    goals: {
      p50Within2xFloor: ps.p50 <= 2 * fs_.p50,
      p99Within2xFloor: ps.p99 <= 2 * fs_.p99,
      ...(name === 'sqlite' ? { p99Under50ms: ps.p99 < 50 } : {}),
    },
  };
}

async function main(): Promise<void> {
  const root = path.join(repo, '.phasebridge');
  fs.mkdirSync(root, { recursive: true });
  const dir = fs.mkdtempSync(path.join(root, 'bench-latency-'));
  const results: unknown[] = [];
  try {
    const sqliteDir = path.join(dir, 'sqlite');
    results.push(await measure('sqlite', (db) => ({ driver: 'sqlite', db }), sqliteDir));
    const redis = DRIVERS.includes('bullmq')
      ? redisAvailable()
      : { ok: false as const, reason: 'not asked for (--drivers)' };
    if (redis.ok) {
      const handle = await startRedis();
      try {
        const bullDir = path.join(dir, 'bullmq');
        results.push(
          await measure(
            'bullmq',
            (_db, part) => ({
              driver: 'bullmq',
              url: handle.url,
              prefix: `bench-${process.pid}-${part}`,
            }),
            bullDir,
          ),
        );
      } finally {
        await handle.stop();
      }
    } else {
      results.push({ driver: 'bullmq', skipped: redis.reason });
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  console.log(
    JSON.stringify({
      bench: 'queue-latency',
      what: 'ms from approve committed-call to the next agent spawn event',
      runs: RUNS,
      concurrent: CONCURRENT,
      agent: AGENT,
      warmup: CONCURRENT > 1 ? `one round of ${CONCURRENT * 2}` : WARMUP,
      layout: LAYOUT,
      node: process.version,
      cpus: os.cpus().length,
      results,
    }),
  );
}

await main();
