/**
 * Per-job timeline of bench/workers.ts (`--timeline`): where each job's time goes, from the
 * bridge's enqueue to the bridge applying its result. Worker phases come from the job result's
 * `timings` (epoch ms, same machine); the bridge's from its own queue and run updates. All times
 * are printed in ms since the round started.
 */
import { parseStepJobResult } from '../src/jobs/orchestrator/job-payload.ts';
import type { Orchestrator } from '../src/jobs/orchestrator/orchestrator.ts';
import type { JobQueue } from '../src/jobs/queue/port.ts';

/** One job's moments (ms since the round's start). */
export interface JobLine {
  run: string;
  worker?: string;
  startRun?: number;
  enqueued?: number;
  picked?: number;
  ready?: number;
  agentStart?: number;
  agentEnd?: number;
  committed?: number;
  pushed?: number;
  /** The bridge heard the outcome. */
  heard?: number;
  /** The run's completion was committed (result applied: commit fetched, branch moved). */
  applied?: number;
}

/** Phase durations averaged over jobs: [from, to] moments of JobLine. */
const PHASES: Record<string, [keyof JobLine, keyof JobLine]> = {
  startRunToEnqueue: ['startRun', 'enqueued'],
  queueWait: ['enqueued', 'picked'],
  workspace: ['picked', 'ready'],
  agentSpawn: ['ready', 'agentStart'],
  agent: ['agentStart', 'agentEnd'],
  commit: ['agentEnd', 'committed'],
  push: ['committed', 'pushed'],
  report: ['pushed', 'heard'],
  apply: ['heard', 'applied'],
};

/** Collects the timeline of one round; `startRun` before each startRun call. */
export class Timeline {
  #t0: number;
  readonly #jobs = new Map<string, JobLine>();
  readonly #offs: (() => void)[] = [];

  constructor(t0: number) {
    this.#t0 = t0;
  }

  /** Moves the clock's zero (the round's start: the first startRun). */
  rebase(t0: number): void {
    this.#t0 = t0;
  }

  #line(run: string): JobLine {
    let line = this.#jobs.get(run);
    if (line === undefined) {
      line = { run };
      this.#jobs.set(run, line);
    }
    return line;
  }

  #now(): number {
    return Date.now() - this.#t0;
  }

  /** A queue that notes when each job is enqueued (the orchestrator enqueues through it). */
  wrap(queue: JobQueue): JobQueue {
    const enqueue: JobQueue['enqueue'] = async (job, opts) => {
      const res = await queue.enqueue(job, opts);
      this.#line(job.runId).enqueued ??= this.#now();
      return res;
    };
    this.#offs.push(
      queue.onOutcome((_id, job, outcome) => {
        const line = this.#line(job.runId);
        line.heard = this.#now();
        const r = outcome.ok ? parseStepJobResult(outcome.result) : null;
        if (r?.worker !== undefined) line.worker = r.worker;
        for (const [k, v] of Object.entries(r?.timings ?? {})) {
          (line as unknown as Record<string, number>)[k] = v - this.#t0;
        }
      }),
    );
    return new Proxy(queue, {
      get: (target, prop) => {
        if (prop === 'enqueue') return enqueue;
        const v = Reflect.get(target, prop);
        return typeof v === 'function' ? v.bind(target) : v;
      },
    });
  }

  /** Notes run completions of `o`. */
  follow(o: Orchestrator): void {
    this.#offs.push(
      o.onUpdate((u) => {
        if (u.state.status === 'completed') this.#line(u.runId).applied ??= this.#now();
      }),
    );
  }

  /** Called just before startRun of the `i`th run; the run id is learnt later. */
  startRun(): number {
    return this.#now();
  }

  /** Records when the run `runId` was asked for. */
  named(runId: string, at: number): void {
    this.#line(runId).startRun = at;
  }

  /**
   * The jobs, the mean of each phase, and per worker its idle time between jobs (from one job's
   * push to its next pick-up: pick-up latency while work waits in the queue).
   */
  report(): Record<string, unknown> {
    for (const off of this.#offs) off();
    const jobs = [...this.#jobs.values()].sort((a, b) => (a.picked ?? 0) - (b.picked ?? 0));
    const means: Record<string, number> = {};
    for (const [name, [from, to]] of Object.entries(PHASES)) {
      const d = jobs
        .map((j) => (j[to] as number | undefined) ?? NaN) // NaN when a moment is missing
        .map((t, i) => t - ((jobs[i]![from] as number | undefined) ?? NaN))
        .filter((x) => Number.isFinite(x));
      if (d.length > 0) means[name] = Math.round(d.reduce((a, b) => a + b, 0) / d.length);
    }
    const gaps: number[] = [];
    const byWorker = new Map<string, JobLine[]>();
    for (const j of jobs) {
      if (j.worker !== undefined) byWorker.set(j.worker, [...(byWorker.get(j.worker) ?? []), j]);
    }
    for (const list of byWorker.values()) {
      for (let i = 1; i < list.length; i++) {
        const prev = list[i - 1]!.pushed ?? list[i - 1]!.agentEnd;
        const next = list[i]!.picked;
        if (prev !== undefined && next !== undefined) gaps.push(next - prev);
      }
    }
    const overheads = jobs
      .filter((j) => j.picked !== undefined && j.pushed !== undefined)
      .map((j) => j.pushed! - j.picked! - (j.agentEnd! - j.agentStart!));
    const mean = (xs: number[]) =>
      xs.length === 0 ? null : Math.round(xs.reduce((a, b) => a + b, 0) / xs.length);
    const firstPick = Math.min(...jobs.map((j) => j.picked ?? Infinity));
    const lastEnqueue = Math.max(...jobs.map((j) => j.enqueued ?? -Infinity));
    const lastPushed = Math.max(...jobs.map((j) => j.pushed ?? -Infinity));
    const lastApplied = Math.max(...jobs.map((j) => j.applied ?? -Infinity));
    return {
      meanPhaseMs: means,
      workerOverheadPerJobMs: mean(overheads),
      idleBetweenJobsMs: { mean: mean(gaps), max: gaps.length ? Math.max(...gaps) : null },
      harness: {
        firstPickMs: firstPick,
        lastEnqueueMs: lastEnqueue,
        lastPushedToAppliedMs: lastApplied - lastPushed,
      },
      jobs,
    };
  }
}
