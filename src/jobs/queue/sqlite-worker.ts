/**
 * A worker of the embedded queue. It claims jobs when woken (an enqueue or a finished job in
 * this process), when a delayed job comes due, and every `pollMs` (enqueues from other
 * processes). A heartbeat renews its leases, notices cancels requested by other processes and
 * notices leases taken over by another worker (then the local run is aborted and its result
 * dropped, so a job never completes twice).
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { markStage } from '../../trace.ts';
import { type ErrorReporter, runToOutcome } from './outcome.ts';
import {
  CANCEL_REASON,
  type Processor,
  type ProgressReporter,
  type QueuedJob,
  type Worker,
} from './port.ts';
import { progressJson } from './signals.ts';
import type { FinishedJob, SqliteJobStore } from './sqlite-store.ts';

/** Timing of leases and polls (ms), and how often a crashed job is taken again. */
export interface SqliteTiming {
  leaseMs: number;
  heartbeatMs: number;
  pollMs: number;
  /** Leases a job may get in all: 1 + infrastructure retries. */
  maxLeases: number;
}

/** The abort reason when another worker took the job over (our lease expired). */
export const LEASE_LOST_REASON = 'phasebridge: lease lost';

interface Running {
  controller: AbortController;
  done: Promise<void>;
  leaseLost: boolean;
  /** The processor has returned: later reports are dropped. */
  settled: boolean;
}

/** What a worker tells its queue, so listeners in this process hear it without a poll. */
export interface WorkerHooks {
  onFinished(job: FinishedJob): void;
  /** The worker took a job (`seq`: the take's signal number). */
  onStarted(job: QueuedJob, seq: number): void;
  /** The job's processor reported progress (stored as signal `seq`). */
  onProgress(job: QueuedJob, seq: number, data: Record<string, unknown>): void;
  onError: ErrorReporter;
}

/** One worker with `concurrency` slots over a SqliteJobStore. */
export class SqliteWorker implements Worker {
  /** The lease owner written to claimed rows. */
  readonly id = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  private readonly running = new Map<string, Running>();
  private closing: Promise<void> | undefined;
  private tickQueued = false;
  private pollTimer: NodeJS.Timeout | undefined;
  private heartbeatTimer: NodeJS.Timeout | undefined;
  private dueTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly store: SqliteJobStore,
    private readonly processor: Processor,
    private readonly concurrency: number,
    private readonly timing: SqliteTiming,
    private readonly hooks: WorkerHooks,
  ) {}

  /** Starts polling and heartbeats, and claims at once. */
  start(): void {
    this.pollTimer = setInterval(() => this.tick(), this.timing.pollMs);
    this.heartbeatTimer = setInterval(() => this.heartbeat(), this.timing.heartbeatMs);
    this.wake();
  }

  /** Asks for a claim round soon (coalesced); in-process enqueues call this to skip the poll wait. */
  wake(): void {
    if (this.tickQueued || this.closing) return;
    this.tickQueued = true;
    setImmediate(() => {
      this.tickQueued = false;
      this.tick();
    });
  }

  /** Aborts a job running here; false when it does not run here. */
  abort(id: string, reason: string): boolean {
    const entry = this.running.get(id);
    if (entry === undefined) return false;
    entry.controller.abort(reason);
    return true;
  }

  /** Stops claiming and waits for running jobs; leases stay renewed until they finish. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      clearInterval(this.pollTimer);
      clearTimeout(this.dueTimer);
      await Promise.all([...this.running.values()].map((r) => r.done));
      clearInterval(this.heartbeatTimer);
    })();
    return this.closing;
  }

  private tick(): void {
    if (this.closing) return;
    try {
      for (const finished of this.store.reclaimExpired(this.timing.maxLeases).finished) {
        this.hooks.onFinished(finished);
      }
      while (this.running.size < this.concurrency) {
        const claimed = this.store.claim(this.id, this.timing.leaseMs);
        if (claimed === null) break;
        const { signalSeq, ...job } = claimed;
        markStage(job.runId, 'claimed');
        this.hooks.onStarted(job, signalSeq);
        this.run(job);
      }
      this.armDueTimer();
    } catch (err) {
      this.hooks.onError(err, 'sqlite job queue: claiming jobs failed');
    }
  }

  /** A delayed job due before the next poll gets its own timer, so delays are precise. */
  private armDueTimer(): void {
    clearTimeout(this.dueTimer);
    if (this.running.size >= this.concurrency) return;
    const at = this.store.nextAvailableAt();
    if (at === null) return;
    const wait = at - Date.now();
    if (wait < this.timing.pollMs) this.dueTimer = setTimeout(() => this.tick(), Math.max(wait, 0));
  }

  private run(job: QueuedJob): void {
    const controller = new AbortController();
    const { id, runId, stepId, attempt, payload } = job;
    const entry: Running = {
      controller,
      leaseLost: false,
      settled: false,
      done: Promise.resolve(),
    };
    entry.done = runToOutcome(
      this.processor,
      { id, runId, stepId, attempt, payload },
      controller.signal,
      this.reporter(job, entry),
    )
      .then((outcome) => {
        entry.settled = true;
        if (entry.leaseLost) return; // another worker owns the job now: its result counts
        const finished = this.store.finish(id, this.id, outcome);
        if (finished !== null) this.hooks.onFinished(finished);
      })
      .catch((err: unknown) => this.hooks.onError(err, `sqlite job queue: finishing ${id} failed`))
      .finally(() => {
        this.running.delete(id);
        this.wake();
      });
    this.running.set(id, entry);
  }

  /** The processor's `report`: stores the data for other processes and tells this one's listeners. */
  private reporter(job: QueuedJob, entry: Running): ProgressReporter {
    return (data) => {
      if (entry.leaseLost || entry.settled) return;
      const json = progressJson(data, this.hooks.onError, job.id);
      if (json === null) return;
      try {
        const seq = this.store.progress(job.id, this.id, json);
        if (seq !== null) {
          this.hooks.onProgress(job, seq, JSON.parse(json) as Record<string, unknown>);
        }
      } catch (err) {
        this.hooks.onError(err, `sqlite job queue: storing progress of ${job.id} failed`);
      }
    };
  }

  private heartbeat(): void {
    if (this.running.size === 0) return;
    try {
      const { owned, cancelRequested } = this.store.renew(
        this.id,
        [...this.running.keys()],
        this.timing.leaseMs,
      );
      for (const [id, entry] of this.running) {
        if (entry.leaseLost) continue;
        if (!owned.has(id)) {
          entry.leaseLost = true;
          entry.controller.abort(LEASE_LOST_REASON);
        } else if (cancelRequested.has(id)) {
          entry.controller.abort(CANCEL_REASON);
        }
      }
    } catch (err) {
      this.hooks.onError(err, 'sqlite job queue: renewing leases failed');
    }
  }
}
