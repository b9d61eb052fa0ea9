/**
 * The queue page's view of the embedded queue: counts and lists by JOB_LIST_STATES over bridge.db's
 * `jobs` table, and removal of a job that has not started. A waiting job whose time has not come
 * is `delayed`; a job cancelled while it ran is listed as failed (BullMQ keeps it so too), one
 * removed before it started is listed nowhere.
 */
import type BetterSqlite3 from 'better-sqlite3';
import type { JobListing, JobListState, RemoveJobResult } from './port.ts';

/** A row as the listing reads it. */
interface ListedRow {
  id: string;
  run_id: string;
  step_id: string;
  attempt: number;
  state: string;
  lease_count: number;
  created_at: number;
  available_at: number;
  started_at: number | null;
  finished_at: number | null;
  error: string | null;
  exit_code: number | null;
}

const COLUMNS =
  'id, run_id, step_id, attempt, state, lease_count, created_at, available_at, started_at, finished_at, error, exit_code';
const FAILED = "(state = 'failed' OR (state = 'cancelled' AND started_at IS NOT NULL))";

/** WHERE and ORDER BY of each list (`?` is now). */
const LISTS: Record<JobListState, { where: string; order: string; now: boolean }> = {
  waiting: {
    where: "state = 'waiting' AND available_at <= ?",
    order: 'created_at, rowid',
    now: true,
  },
  delayed: {
    where: "state = 'waiting' AND available_at > ?",
    order: 'available_at, rowid',
    now: true,
  },
  active: { where: "state = 'active'", order: 'started_at, rowid', now: false },
  failed: { where: FAILED, order: 'finished_at DESC, rowid DESC', now: false },
  completed: { where: "state = 'completed'", order: 'finished_at DESC, rowid DESC', now: false },
};

/** How many jobs each list holds. */
export function sqliteJobCounts(
  db: BetterSqlite3.Database,
  now: number,
): Record<JobListState, number> {
  const row = db
    .prepare(
      `SELECT
         sum(state = 'waiting' AND available_at <= @now) AS waiting,
         sum(state = 'waiting' AND available_at > @now) AS delayed,
         sum(state = 'active') AS active,
         sum(${FAILED}) AS failed,
         sum(state = 'completed') AS completed
       FROM jobs`,
    )
    .get({ now }) as Record<JobListState, number | null>;
  return {
    waiting: row.waiting ?? 0,
    active: row.active ?? 0,
    delayed: row.delayed ?? 0,
    failed: row.failed ?? 0,
    completed: row.completed ?? 0,
  };
}

/** Up to `limit` jobs of one list, in the order of LISTS. */
export function sqliteListJobs(
  db: BetterSqlite3.Database,
  state: JobListState,
  limit: number,
  now: number,
): JobListing[] {
  const list = LISTS[state];
  const rows = db
    .prepare(`SELECT ${COLUMNS} FROM jobs WHERE ${list.where} ORDER BY ${list.order} LIMIT ?`)
    .all(...(list.now ? [now] : []), limit) as ListedRow[];
  return rows.map((r) => ({
    id: r.id,
    runId: r.run_id,
    stepId: r.step_id,
    attempt: r.attempt,
    state,
    attempts: r.lease_count,
    createdAt: r.created_at,
    ...(state === 'delayed' && { availableAt: r.available_at }),
    ...(r.started_at !== null && { startedAt: r.started_at }),
    ...(r.finished_at !== null && state !== 'active' && { finishedAt: r.finished_at }),
    ...(state === 'failed' && { error: r.error ?? 'failed' }),
    ...(r.state === 'cancelled' && { cancelled: true }),
    ...(state === 'completed' && r.exit_code !== null && { exitCode: r.exit_code }),
  }));
}

/** Cancels a job that has not started (it never runs); a running one is refused. */
export function sqliteRemoveJob(
  db: BetterSqlite3.Database,
  id: string,
  now: number,
): RemoveJobResult {
  return db
    .transaction((): RemoveJobResult => {
      const row = db.prepare('SELECT state FROM jobs WHERE id = ?').get(id) as
        | { state: string }
        | undefined;
      if (row?.state === 'active') return 'active';
      if (row?.state !== 'waiting') return 'not-found';
      db.prepare(
        `UPDATE jobs SET state = 'cancelled', finished_at = ?, error = 'removed before start'
         WHERE id = ? AND state = 'waiting'`,
      ).run(now, id);
      return 'removed';
    })
    .immediate();
}
