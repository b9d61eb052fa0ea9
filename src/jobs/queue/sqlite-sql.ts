/**
 * The SQL text of the embedded queue and the mapping of `jobs` rows (0001 + 0002_job_queue
 * columns) to port values. Pure apart from preparing statements.
 */
import type BetterSqlite3 from 'better-sqlite3';
import { errorMessage } from './outcome.ts';
import type { JobOutcome, JobSpec, JobState } from './port.ts';

/** The columns of `jobs` the queue reads. */
export interface JobRow {
  id: string;
  run_id: string;
  step_id: string;
  attempt: number;
  state: JobState;
  payload_json: string;
  result_json: string | null;
  error: string | null;
  lost: number;
  lease_count: number;
  lease_owner: string | null;
  outcome_seq: number | null;
  cancel_requested_at: number | null;
  signal_seq: number | null;
  progress_json: string | null;
}

const NEXT_SEQ = '(SELECT COALESCE(MAX(outcome_seq), 0) + 1 FROM jobs)';
const NEXT_SIGNAL = '(SELECT COALESCE(MAX(signal_seq), 0) + 1 FROM jobs)';

/** Prepares every statement once per connection. */
export function prepareStatements(db: BetterSqlite3.Database) {
  const prepare = (sql: string) => db.prepare(sql);
  return {
    insert: prepare(
      `INSERT INTO jobs (id, run_id, step_id, attempt, state, payload_json, available_at, created_at)
       VALUES (?, ?, ?, ?, 'waiting', ?, ?, ?) ON CONFLICT(id) DO NOTHING`,
    ),
    row: prepare('SELECT * FROM jobs WHERE id = ?'),
    expired: prepare(`SELECT * FROM jobs WHERE state = 'active' AND lease_expires_at < ?`),
    anyExpired: prepare(
      `SELECT 1 FROM jobs WHERE state = 'active' AND lease_expires_at < ? LIMIT 1`,
    ),
    requeue: prepare(
      `UPDATE jobs SET state = 'waiting', lease_owner = NULL, lease_expires_at = NULL,
       available_at = ? WHERE id = ?`,
    ),
    nextClaimable: prepare(
      `SELECT * FROM jobs AS j WHERE j.state = 'waiting' AND j.available_at <= ?
         AND NOT EXISTS (SELECT 1 FROM jobs AS a WHERE a.run_id = j.run_id AND a.state = 'active'
           AND (instr(j.step_id, '+task+') = 0 OR instr(a.step_id, '+task+') = 0
                OR a.step_id = j.step_id))
       ORDER BY j.available_at, j.created_at, j.id LIMIT 1`,
    ),
    // Taking a job is its `started` signal for other processes (progress_json cleared).
    lease: prepare(
      `UPDATE jobs SET state = 'active', lease_owner = ?, lease_expires_at = ?,
       started_at = COALESCE(started_at, ?), lease_count = lease_count + 1,
       signal_seq = ${NEXT_SIGNAL}, progress_json = NULL WHERE id = ? RETURNING signal_seq`,
    ),
    progress: prepare(
      `UPDATE jobs SET progress_json = ?, signal_seq = ${NEXT_SIGNAL}
       WHERE id = ? AND state = 'active' AND lease_owner = ? RETURNING signal_seq`,
    ),
    maxSignalSeq: prepare('SELECT COALESCE(MAX(signal_seq), 0) AS seq FROM jobs'),
    signalsAfter: prepare('SELECT * FROM jobs WHERE signal_seq > ? ORDER BY signal_seq LIMIT ?'),
    nextAvailableAt: prepare(
      `SELECT MIN(available_at) AS at FROM jobs WHERE state = 'waiting' AND available_at > ?`,
    ),
    // Only the jobs the worker still runs: a row it gave up on (say, a failed finish) must expire.
    renew: prepare(
      `UPDATE jobs SET lease_expires_at = ? WHERE state = 'active' AND lease_owner = ?
       AND id IN (SELECT value FROM json_each(?))`,
    ),
    owned: prepare(
      `SELECT id, cancel_requested_at FROM jobs WHERE state = 'active' AND lease_owner = ?`,
    ),
    finish: prepare(
      `UPDATE jobs SET state = ?, finished_at = ?, result_json = ?, error = ?, lost = ?,
       exit_code = ?, tokens_in = ?, tokens_out = ?, cost_usd = ?,
       lease_owner = NULL, lease_expires_at = NULL, outcome_seq = ${NEXT_SEQ}
       WHERE id = ? AND state = 'active' AND (? IS NULL OR lease_owner = ?)
       RETURNING outcome_seq`,
    ),
    cancelWaiting: prepare(
      `UPDATE jobs SET state = 'cancelled', finished_at = ?, error = 'cancelled before start'
       WHERE id = ? AND state = 'waiting'`,
    ),
    requestCancel: prepare(
      `UPDATE jobs SET cancel_requested_at = ? WHERE id = ? AND state = 'active'`,
    ),
    maxSeq: prepare('SELECT COALESCE(MAX(outcome_seq), 0) AS seq FROM jobs'),
    finishedAfter: prepare('SELECT * FROM jobs WHERE outcome_seq > ? ORDER BY outcome_seq LIMIT ?'),
  };
}

/** The prepared statements of one connection. */
export type Statements = ReturnType<typeof prepareStatements>;

/** The spec stored in a row; a payload that is not JSON (a hand edit) does not crash the queue. */
export function specOf(row: JobRow): JobSpec {
  let payload: Record<string, unknown>;
  try {
    payload = JSON.parse(row.payload_json) as Record<string, unknown>;
  } catch (err) {
    // Written by us as JSON; a hand-edited row must not crash the queue.
    payload = { invalidPayloadJson: errorMessage(err) };
  }
  return { runId: row.run_id, stepId: row.step_id, attempt: row.attempt, payload };
}

/** The outcome of a finished row; undefined while waiting or active. */
export function outcomeOf(row: JobRow): JobOutcome | undefined {
  switch (row.state) {
    case 'completed':
      return { ok: true, result: JSON.parse(row.result_json ?? '{}') as Record<string, unknown> };
    case 'failed':
      return row.lost === 1
        ? { ok: false, error: row.error ?? 'lost', lost: true }
        : { ok: false, error: row.error ?? 'failed' };
    case 'cancelled':
      return { ok: false, error: row.error ?? 'cancelled', cancelled: true };
    default:
      return undefined;
  }
}
