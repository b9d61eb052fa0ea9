/**
 * The change feed's tables (migration 0004): `run_changes`, one row per accepted commit from any
 * process (a wake-up signal; the ledger stays the truth), and `run_feed`, the per-run ledger seq
 * whose events the bridge has shown (its persisted cursor). Raw better-sqlite3 statements: the
 * bridge polls several times a second and the queries must stay sub-millisecond.
 */
import type Database from 'better-sqlite3';
import type { BridgeDb } from '../connection.ts';
import type { AnyBridgeDb } from '../migrator.ts';

/** One change row. */
export interface RunChange {
  id: number;
  runId: string;
  seq: number;
  pid: number;
}

/** A run with changes the feed has not shown: the first unseen change's seq and its cursor. */
export interface PendingRun {
  runId: string;
  /** Seq of the earliest change row after the cursor. */
  firstSeq: number;
  /** The persisted cursor, or null when the bridge never showed the run. */
  cursor: number | null;
}

/** Rows older than this are pruned whatever their state (a week of history is plenty). */
export const MAX_AGE_MS = 7 * 24 * 3600_000;

/** A result now (SQLite's synchronous statements) or later (Postgres). */
export type Maybe<T> = T | Promise<T>;

/**
 * The change feed's tables on either dialect: `RunFeedRepo` (SQLite, raw and synchronous) or
 * `PostgresRunFeedRepo` (run-feed-postgres.ts). `runFeedStoreOf` picks the one for a bridge.db.
 */
export interface RunFeedStore {
  /** Records accepted commits of this process (one transaction). */
  record(changes: readonly { runId: string; seq: number }[]): Maybe<void>;
  /** Changes made by other processes after row `id`, oldest first (at most 1000). */
  changesAfter(id: number): Maybe<RunChange[]>;
  /** The newest change row's id (0 when none). */
  latestId(): Maybe<number>;
  /** A value that moves when another process may have recorded changes (cheap change detection). */
  dataVersion(): Maybe<number>;
  /** Runs with change rows past their cursor (what the bridge missed while it was down). */
  pending(): Maybe<PendingRun[]>;
  /** The run's persisted cursor, or null. */
  cursor(runId: string): Maybe<number | null>;
  /** Moves the run's cursor forward (never back). */
  setCursor(runId: string, seq: number): Maybe<void>;
  /** Sets the run's cursor, also backwards (its ledger was cut back by a repair). */
  resetCursor(runId: string, seq: number): Maybe<void>;
  /** Drops rows the feed has shown or that are a week old. */
  prune(): Maybe<void>;
}

/** Reads and writes `run_changes` and `run_feed` on SQLite. */
export class RunFeedRepo implements RunFeedStore {
  readonly #db: Database.Database;
  readonly #now: () => number;
  readonly #insert: Database.Statement;
  readonly #after: Database.Statement;

  constructor(db: BridgeDb, now: () => number = Date.now) {
    this.#db = db.sqlite;
    this.#now = now;
    this.#insert = this.#db.prepare(
      'INSERT INTO run_changes (run_id, seq, pid, at) VALUES (?, ?, ?, ?)',
    );
    this.#after = this.#db.prepare(
      'SELECT id, run_id AS runId, seq, pid FROM run_changes WHERE id > ? AND pid != ? ORDER BY id LIMIT 1000',
    );
  }

  /** Records accepted commits of this process (one transaction). */
  record(changes: readonly { runId: string; seq: number }[]): void {
    if (changes.length === 0) return;
    const at = this.#now();
    this.#db.transaction(() => {
      for (const c of changes) this.#insert.run(c.runId, c.seq, process.pid, at);
    })();
  }

  /** Changes made by other processes after row `id`, oldest first (at most 1000). */
  changesAfter(id: number): RunChange[] {
    return this.#after.all(id, process.pid) as RunChange[];
  }

  /** The newest change row's id (0 when none). */
  latestId(): number {
    const row = this.#db.prepare('SELECT max(id) AS id FROM run_changes').get() as {
      id: number | null;
    };
    return row.id ?? 0;
  }

  /** A counter that moves when another connection commits (cheap change detection). */
  dataVersion(): number {
    return this.#db.pragma('data_version', { simple: true }) as number;
  }

  /** Runs with change rows past their cursor (what the bridge missed while it was down). */
  pending(): PendingRun[] {
    return this.#db
      .prepare(
        `SELECT c.run_id AS runId, min(c.seq) AS firstSeq, f.seq AS cursor
           FROM run_changes c LEFT JOIN run_feed f ON f.run_id = c.run_id
          WHERE f.seq IS NULL OR c.seq > f.seq
          GROUP BY c.run_id`,
      )
      .all() as PendingRun[];
  }

  /** The run's persisted cursor, or null. */
  cursor(runId: string): number | null {
    const row = this.#db.prepare('SELECT seq FROM run_feed WHERE run_id = ?').get(runId) as
      | { seq: number }
      | undefined;
    return row?.seq ?? null;
  }

  /** Moves the run's cursor forward (never back). */
  setCursor(runId: string, seq: number): void {
    this.#db
      .prepare(
        `INSERT INTO run_feed (run_id, seq, updated_at) VALUES (?, ?, ?)
         ON CONFLICT (run_id) DO UPDATE SET seq = max(seq, excluded.seq), updated_at = excluded.updated_at`,
      )
      .run(runId, seq, this.#now());
  }

  /** Sets the run's cursor, also backwards (its ledger was cut back by a repair). */
  resetCursor(runId: string, seq: number): void {
    this.#db
      .prepare(
        `INSERT INTO run_feed (run_id, seq, updated_at) VALUES (?, ?, ?)
         ON CONFLICT (run_id) DO UPDATE SET seq = excluded.seq, updated_at = excluded.updated_at`,
      )
      .run(runId, seq, this.#now());
  }

  /**
   * Drops change rows the feed has shown (or that are a week old) and cursors of runs without
   * rows left that have been still for a week: the tables grow with active work, not history.
   */
  prune(): void {
    const cutoff = this.#now() - MAX_AGE_MS;
    this.#db
      .prepare(
        `DELETE FROM run_changes WHERE at < ? OR seq <= coalesce(
           (SELECT f.seq FROM run_feed f WHERE f.run_id = run_changes.run_id), -1)`,
      )
      .run(cutoff);
    this.#db
      .prepare(
        `DELETE FROM run_feed WHERE updated_at < ?
           AND NOT EXISTS (SELECT 1 FROM run_changes c WHERE c.run_id = run_feed.run_id)`,
      )
      .run(cutoff);
  }
}

/**
 * The change feed's store for `db`: SQLite's synchronous repo, or (loaded only then) the Postgres
 * twin.
 */
export async function runFeedStoreOf(
  db: AnyBridgeDb,
  now: () => number = Date.now,
): Promise<RunFeedStore> {
  if (db.dialect === 'sqlite') return new RunFeedRepo(db, now);
  const { PostgresRunFeedRepo } = await import('./run-feed-postgres.ts');
  return new PostgresRunFeedRepo(db, now);
}
