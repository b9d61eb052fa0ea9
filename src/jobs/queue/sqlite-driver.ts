/**
 * The embedded job queue over bridge.db (the default driver: nothing to install). Processes
 * sharing the file cooperate through leases; within one process an enqueue wakes the worker
 * directly and a finished job notifies listeners directly, so the hot path never waits for a poll.
 * Started/progress signals likewise: direct in this process, a `signal_seq` poll for the others.
 */
import { hostname } from 'node:os';
import type { BridgeDb } from '../../db/connection.ts';
import { type ErrorReporter, OutcomeListeners, warnOnError } from './outcome.ts';
import {
  assertConcurrency,
  CANCEL_REASON,
  delayOf,
  type JobListing,
  type JobListState,
  type JobQueue,
  type JobSpec,
  type JobState,
  type JobStatus,
  type OutcomeListener,
  type Processor,
  type ProgressListener,
  type QueuedJob,
  type ReclaimResult,
  type RemoveJobResult,
  type StartedListener,
  validateJobSpec,
  type Worker,
  type WorkerOptions,
} from './port.ts';
import { parseProgress, SignalListeners } from './signals.ts';
import { sqliteJobCounts, sqliteListJobs, sqliteRemoveJob } from './sqlite-listing.ts';
import { type FinishedJob, SqliteJobStore } from './sqlite-store.ts';
import { type SqliteTiming, SqliteWorker } from './sqlite-worker.ts';

/** Options of the sqlite driver; the defaults suit production. */
export interface SqliteQueueOptions {
  /** An open, migrated bridge.db; the queue does not close it. */
  db: BridgeDb;
  /** How long a claimed job stays owned without a heartbeat (default 30 s). */
  leaseMs?: number;
  /** Lease renewal and cross-process cancel check interval (default min(1 s, leaseMs / 3)). */
  heartbeatMs?: number;
  /** Poll interval for work and outcomes from other processes (default 100 ms). */
  pollMs?: number;
  /** Times a job is taken again after its worker died, before it fails as lost (default 2). */
  maxLostRetries?: number;
  /** Where errors that cannot be thrown go (default: a process warning). */
  onError?: ErrorReporter;
}

/** Opens the sqlite job queue on `opts.db`. */
export function createSqliteQueue(opts: SqliteQueueOptions): JobQueue {
  return new SqliteJobQueue(opts);
}

class SqliteJobQueue implements JobQueue {
  readonly driver = 'sqlite' as const;
  private readonly store: SqliteJobStore;
  private readonly sqlite: BridgeDb['sqlite'];
  private readonly timing: SqliteTiming;
  private readonly onError: ErrorReporter;
  private readonly listeners: OutcomeListeners;
  private readonly workers = new Set<SqliteWorker>();
  /** Outcomes up to this sequence number were delivered (or predate the queue). */
  private cursor: number;
  /** Outcomes delivered directly by a worker of this process, ahead of the poll. */
  private readonly deliveredEarly = new Set<number>();
  private outcomeTimer: NodeJS.Timeout | undefined;
  private readonly signals: SignalListeners;
  /** Signals up to this number were delivered (or predate the queue). */
  private signalCursor: number;
  private readonly signalsDeliveredEarly = new Set<number>();
  /** Job id → the take whose `started` was delivered (a later take starts again). */
  private readonly startedTakes = new Map<string, number>();
  private signalTimer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(opts: SqliteQueueOptions) {
    this.store = new SqliteJobStore(opts.db.sqlite);
    this.sqlite = opts.db.sqlite;
    const leaseMs = opts.leaseMs ?? 30_000;
    this.timing = {
      leaseMs,
      heartbeatMs: opts.heartbeatMs ?? Math.min(1000, Math.floor(leaseMs / 3)),
      pollMs: opts.pollMs ?? 100,
      maxLeases: 1 + (opts.maxLostRetries ?? 2),
    };
    this.onError = opts.onError ?? warnOnError;
    this.listeners = new OutcomeListeners(this.onError);
    this.cursor = this.store.maxOutcomeSeq();
    this.signals = new SignalListeners(this.onError);
    this.signalCursor = this.store.maxSignalSeq();
  }

  async enqueue(
    job: JobSpec,
    opts?: { delayMs?: number },
  ): Promise<{ id: string; created: boolean }> {
    this.assertOpen();
    const { id, payloadJson } = validateJobSpec(job);
    const created = this.store.insert(job, id, payloadJson, delayOf(opts));
    if (created) for (const worker of this.workers) worker.wake();
    return { id, created };
  }

  async cancel(id: string): Promise<'removed' | 'aborted' | 'not-found'> {
    this.assertOpen();
    const answer = this.store.cancel(id);
    // A worker of this process aborts now; one in another process at its next heartbeat.
    if (answer === 'aborted') for (const worker of this.workers) worker.abort(id, CANCEL_REASON);
    return answer;
  }

  onOutcome(listener: OutcomeListener): () => void {
    const off = this.listeners.add(listener);
    this.outcomeTimer ??= setInterval(() => this.pollOutcomes(), this.timing.pollMs).unref();
    return () => {
      off();
      if (this.listeners.size === 0) {
        clearInterval(this.outcomeTimer);
        this.outcomeTimer = undefined;
      }
    };
  }

  onStarted(listener: StartedListener): () => void {
    return this.watchSignals(this.signals.addStarted(listener));
  }

  onProgress(listener: ProgressListener): () => void {
    return this.watchSignals(this.signals.addProgress(listener));
  }

  /** `accepts` and `announce` are BullMQ features: every embedded-queue worker takes every job. */
  async startWorker(processor: Processor, opts: WorkerOptions): Promise<Worker> {
    this.assertOpen();
    assertConcurrency(opts.concurrency);
    const worker = new SqliteWorker(this.store, processor, opts.concurrency, this.timing, {
      onFinished: (finished) => this.deliverEarly(finished),
      onStarted: (job, seq) => {
        if (this.takeEarly(seq)) this.signals.emitStarted(job.id, specOfJob(job));
      },
      onProgress: (job, seq, data) => {
        if (this.takeEarly(seq)) this.signals.emitProgress(job.id, specOfJob(job), data);
      },
      onError: this.onError,
    });
    this.workers.add(worker);
    worker.start();
    return {
      id: worker.id,
      close: async () => {
        await worker.close();
        this.workers.delete(worker);
      },
    };
  }

  async get(id: string): Promise<JobStatus | null> {
    return this.store.status(id);
  }

  async counts(): Promise<Partial<Record<JobState, number>>> {
    return this.store.counts();
  }

  async jobCounts(): Promise<Record<JobListState, number>> {
    return sqliteJobCounts(this.sqlite, Date.now());
  }

  async listJobs(state: JobListState, limit: number): Promise<JobListing[]> {
    return sqliteListJobs(this.sqlite, state, limit, Date.now());
  }

  async removeJob(id: string): Promise<RemoveJobResult> {
    this.assertOpen();
    return sqliteRemoveJob(this.sqlite, id, Date.now());
  }

  async reclaim(id: string): Promise<ReclaimResult> {
    this.assertOpen();
    const result = this.store.reclaim(id, ownerIsGone);
    if (result.kind === 'reclaimed') for (const worker of this.workers) worker.wake();
    return result;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([...this.workers].map((w) => w.close()));
    this.workers.clear();
    // Deliver what finished last, then stop.
    if (this.outcomeTimer !== undefined) this.pollOutcomes();
    clearInterval(this.outcomeTimer);
    this.outcomeTimer = undefined;
    clearInterval(this.signalTimer);
    this.signalTimer = undefined;
  }

  /** Polls signals while anyone listens; returns the unsubscribe function. */
  private watchSignals(off: () => void): () => void {
    this.signalTimer ??= setInterval(() => this.pollSignals(), this.timing.pollMs).unref();
    return () => {
      off();
      if (this.signals.size === 0) {
        clearInterval(this.signalTimer);
        this.signalTimer = undefined;
      }
    };
  }

  /** A signal of this process's worker: deliver it now (true) unless nobody listens or the poll passed it. */
  private takeEarly(seq: number): boolean {
    if (this.signals.size === 0 || seq <= this.signalCursor) return false;
    this.signalsDeliveredEarly.add(seq);
    return true;
  }

  /** Signals of other processes' workers: a new take is `started`, stored progress is `progress`. */
  private pollSignals(): void {
    try {
      for (;;) {
        const batch = this.store.signalsAfter(this.signalCursor);
        for (const s of batch) {
          this.signalCursor = s.seq;
          if (this.signalsDeliveredEarly.delete(s.seq)) continue;
          if (!s.active) {
            this.startedTakes.delete(s.id);
            continue;
          }
          if (this.startedTakes.get(s.id) !== s.lease) {
            // Bounded: forgetting only risks a repeated `started`, which the port allows.
            if (this.startedTakes.size > 10_000) this.startedTakes.clear();
            this.startedTakes.set(s.id, s.lease);
            this.signals.emitStarted(s.id, s.job);
          }
          const data = s.progressJson === null ? null : parseProgress(s.progressJson);
          if (data !== null) this.signals.emitProgress(s.id, s.job, data);
        }
        if (batch.length === 0) return;
      }
    } catch (err) {
      this.onError(err, 'sqlite job queue: reading signals failed');
    }
  }

  /** A job finished in this process: tell listeners now instead of at the next poll. */
  private deliverEarly(finished: FinishedJob): void {
    if (this.listeners.size === 0 || finished.seq <= this.cursor) return;
    this.deliveredEarly.add(finished.seq);
    this.listeners.emit(finished.id, finished.job, finished.outcome);
  }

  private pollOutcomes(): void {
    try {
      for (;;) {
        const batch = this.store.finishedAfter(this.cursor);
        for (const finished of batch) {
          this.cursor = finished.seq;
          if (this.deliveredEarly.delete(finished.seq)) continue;
          this.listeners.emit(finished.id, finished.job, finished.outcome);
        }
        if (batch.length === 0) return;
      }
    } catch (err) {
      this.onError(err, 'sqlite job queue: reading outcomes failed');
    }
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('job queue is closed');
  }
}

function specOfJob(job: QueuedJob): JobSpec {
  return { runId: job.runId, stepId: job.stepId, attempt: job.attempt, payload: job.payload };
}

/**
 * True when a lease owner (`host:pid:nonce`, see SqliteWorker) is a process of this host that
 * no longer exists. Another host's owner is never judged gone: its lease runs out instead.
 */
function ownerIsGone(owner: string): boolean {
  const [host, pid] = owner.split(':');
  if (host !== hostname() || !/^\d+$/.test(pid ?? '')) return false;
  if (Number(pid) === process.pid) return false;
  try {
    process.kill(Number(pid), 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
}
