/**
 * The state changes of the embedded queue over bridge.db's `jobs` table. Synchronous: each
 * change is one short write transaction (BEGIN IMMEDIATE), which makes claims safe across
 * processes sharing the file.
 */
import type BetterSqlite3 from 'better-sqlite3';
import { CorruptStateError } from '../../errors.ts';
import { errorMessage, resultColumnsOf } from './outcome.ts';
import type { JobOutcome, JobSpec, JobState, JobStatus, QueuedJob, ReclaimResult } from './port.ts';
import {
  type JobRow,
  outcomeOf,
  prepareStatements,
  type Statements,
  specOf,
} from './sqlite-sql.ts';

/** A finished job as read back for outcome delivery. */
export interface FinishedJob {
  seq: number;
  id: string;
  job: JobSpec;
  outcome: JobOutcome;
}

/** A started or progress signal as read back for other processes' listeners. */
export interface JobSignal {
  seq: number;
  id: string;
  job: JobSpec;
  /** Still running: signals of finished jobs are not delivered. */
  active: boolean;
  /** Which take of the job (1 + infrastructure retries): a new one is a new `started`. */
  lease: number;
  /** The latest progress report (JSON text), null right after the take. */
  progressJson: string | null;
}

/** What happened to leases that expired (their worker stopped renewing them). */
export interface ReclaimReport {
  /** Jobs put back to waiting for another worker. */
  requeued: string[];
  /** Jobs finished (lost or cancelled) instead; they have outcomes. */
  finished: FinishedJob[];
}

/** Prepared statements over one connection; every method is synchronous. */
export class SqliteJobStore {
  private readonly s: Statements;

  constructor(
    private readonly db: BetterSqlite3.Database,
    private readonly now: () => number = Date.now,
  ) {
    try {
      this.s = prepareStatements(db);
    } catch (err) {
      // The usual cause: bridge.db was opened without running the migrations.
      throw new CorruptStateError(
        `bridge.db ${db.name}: the jobs table is not ready for the job queue (${errorMessage(err)}); run 'phasebridge migrate'`,
        { cause: err },
      );
    }
  }

  /** Inserts a waiting job; false when one with this id exists. */
  insert(job: JobSpec, id: string, payloadJson: string, delayMs: number): boolean {
    const now = this.now();
    const info = this.s.insert.run(
      id,
      job.runId,
      job.stepId,
      job.attempt,
      payloadJson,
      now + delayMs,
      now,
    );
    return info.changes === 1;
  }

  /**
   * Deals with expired leases: a job goes back to waiting unless it was taken `maxLeases` times
   * already (then it fails as lost) or a cancel was requested (then it is cancelled).
   */
  reclaimExpired(maxLeases: number): ReclaimReport {
    // A read first: idle polls must not take the write lock other processes need.
    if (this.s.anyExpired.get(this.now()) === undefined) return { requeued: [], finished: [] };
    return this.db
      .transaction((): ReclaimReport => {
        const now = this.now();
        const report: ReclaimReport = { requeued: [], finished: [] };
        for (const row of this.s.expired.all(now) as JobRow[]) {
          if (row.cancel_requested_at !== null) {
            const outcome: JobOutcome = { ok: false, error: 'cancelled', cancelled: true };
            const done = this.finishRow(row, null, outcome);
            if (done) report.finished.push(done);
          } else if (row.lease_count >= maxLeases) {
            const error = `lost: its worker stopped ${row.lease_count} time(s) (process died or hung)`;
            const done = this.finishRow(row, null, { ok: false, error, lost: true });
            if (done) report.finished.push(done);
          } else {
            this.s.requeue.run(now, row.id);
            report.requeued.push(row.id);
          }
        }
        return report;
      })
      .immediate();
  }

  /**
   * Leases the oldest runnable job (none of its run active) to `owner`, or returns null;
   * `signalSeq` numbers the take (its `started` signal).
   */
  claim(owner: string, leaseMs: number): (QueuedJob & { signalSeq: number }) | null {
    if (this.s.nextClaimable.get(this.now()) === undefined) return null; // read first, as above
    return this.db
      .transaction(() => {
        const now = this.now();
        const row = this.s.nextClaimable.get(now) as JobRow | undefined;
        if (row === undefined) return null;
        const leased = this.s.lease.get(owner, now + leaseMs, now, row.id) as {
          signal_seq: number;
        };
        return { ...specOf(row), id: row.id, signalSeq: leased.signal_seq };
      })
      .immediate();
  }

  /** Stores a progress report of a job `owner` runs; its signal number, or null when not owned. */
  progress(id: string, owner: string, json: string): number | null {
    const row = this.s.progress.get(json, id, owner) as { signal_seq: number } | undefined;
    return row?.signal_seq ?? null;
  }

  /** The highest signal number so far (0 when none). */
  maxSignalSeq(): number {
    return (this.s.maxSignalSeq.get() as { seq: number }).seq;
  }

  /** Jobs whose latest signal is numbered above `seq`, oldest signal first. */
  signalsAfter(seq: number, limit = 200): JobSignal[] {
    return (this.s.signalsAfter.all(seq, limit) as JobRow[]).map((row) => ({
      seq: row.signal_seq as number,
      id: row.id,
      job: specOf(row),
      active: row.state === 'active',
      lease: row.lease_count,
      progressJson: row.progress_json,
    }));
  }

  /** When the next delayed job becomes runnable, or null when none waits for a time. */
  nextAvailableAt(): number | null {
    const row = this.s.nextAvailableAt.get(this.now()) as { at: number | null };
    return row.at;
  }

  /** Extends the leases of `ids` held by `owner`; returns those it still owns and which must be cancelled. */
  renew(
    owner: string,
    ids: readonly string[],
    leaseMs: number,
  ): { owned: Set<string>; cancelRequested: Set<string> } {
    return this.db
      .transaction(() => {
        this.s.renew.run(this.now() + leaseMs, owner, JSON.stringify(ids));
        const rows = this.s.owned.all(owner) as {
          id: string;
          cancel_requested_at: number | null;
        }[];
        return {
          owned: new Set(rows.map((r) => r.id)),
          cancelRequested: new Set(
            rows.filter((r) => r.cancel_requested_at !== null).map((r) => r.id),
          ),
        };
      })
      .immediate();
  }

  /** Records the outcome of a job leased by `owner`; null when the lease was lost meanwhile. */
  finish(id: string, owner: string, outcome: JobOutcome): FinishedJob | null {
    return this.db
      .transaction(() => {
        const row = this.s.row.get(id) as JobRow | undefined;
        return row === undefined ? null : this.finishRow(row, owner, outcome);
      })
      .immediate();
  }

  /** Cancels a waiting job, or flags a running one for its worker; 'aborted' means flagged. */
  cancel(id: string): 'removed' | 'aborted' | 'not-found' {
    return this.db
      .transaction(() => {
        const now = this.now();
        if (this.s.cancelWaiting.run(now, id).changes === 1) return 'removed' as const;
        if (this.s.requestCancel.run(now, id).changes === 1) return 'aborted' as const;
        return 'not-found' as const;
      })
      .immediate();
  }

  /** The highest outcome sequence number so far (0 when none). */
  maxOutcomeSeq(): number {
    return (this.s.maxSeq.get() as { seq: number }).seq;
  }

  /** Finished jobs with a sequence number above `seq`, oldest first. */
  finishedAfter(seq: number, limit = 200): FinishedJob[] {
    return (this.s.finishedAfter.all(seq, limit) as JobRow[]).map((row) => ({
      seq: row.outcome_seq as number,
      id: row.id,
      job: specOf(row),
      outcome: outcomeOf(row) as JobOutcome,
    }));
  }

  /** The job's status, or null when unknown. */
  /** Requeues an active job at once when `isDead(owner)`; else says who holds it. */
  reclaim(id: string, isDead: (owner: string) => boolean): ReclaimResult {
    const row = this.s.row.get(id) as JobRow | undefined;
    if (row?.state !== 'active') return { kind: 'not-active' };
    const owner = row.lease_owner ?? '';
    if (!isDead(owner)) return { kind: 'held', by: owner };
    this.s.requeue.run(Date.now(), id);
    return { kind: 'reclaimed' };
  }

  /** Jobs by state. */
  counts(): Partial<Record<JobState, number>> {
    const rows = this.db.prepare('SELECT state, count(*) AS n FROM jobs GROUP BY state').all() as {
      state: JobState;
      n: number;
    }[];
    return Object.fromEntries(rows.map((r) => [r.state, r.n]));
  }

  status(id: string): JobStatus | null {
    const row = this.s.row.get(id) as JobRow | undefined;
    if (row === undefined) return null;
    const outcome = outcomeOf(row);
    const status: JobStatus = { id, state: row.state, attempts: row.lease_count };
    if (outcome !== undefined) status.outcome = outcome;
    return status;
  }

  private finishRow(row: JobRow, owner: string | null, outcome: JobOutcome): FinishedJob | null {
    const state: JobState = outcome.ok ? 'completed' : outcome.cancelled ? 'cancelled' : 'failed';
    const result = outcome.ok ? outcome.result : undefined;
    const cols = resultColumnsOf(result);
    const back = this.s.finish.get(
      state,
      this.now(),
      result === undefined ? null : JSON.stringify(result),
      outcome.ok ? null : outcome.error,
      !outcome.ok && outcome.lost ? 1 : 0,
      cols.exitCode,
      cols.tokensIn,
      cols.tokensOut,
      cols.costUsd,
      row.id,
      owner,
      owner,
    ) as { outcome_seq: number } | undefined;
    if (back === undefined) return null;
    return { seq: back.outcome_seq, id: row.id, job: specOf(row), outcome };
  }
}
