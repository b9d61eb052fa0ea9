/**
 * 0002_job_queue: columns the embedded (sqlite) job queue needs beyond 0001's `jobs` table.
 * - lease_count: times a worker took the job; bounds infrastructure retries after crashes.
 * - cancel_requested_at: a cancel for a running job, seen by the owning worker's heartbeat
 *   (the worker may be another process).
 * - lost: 1 when the job failed because its workers kept dying (outcome `lost: true`).
 * - outcome_seq: a strictly increasing number given when a job finishes, so every process can
 *   read new outcomes with one indexed range query (finished_at can tie or go backwards).
 */
import { type Kysely, sql } from 'kysely';

/** Adds the job queue's columns and indexes. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('jobs')
    .addColumn('lease_count', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.alterTable('jobs').addColumn('cancel_requested_at', 'integer').execute();
  await db.schema
    .alterTable('jobs')
    .addColumn('lost', 'integer', (c) => c.notNull().defaultTo(0).check(sql`lost in (0, 1)`))
    .execute();
  await db.schema.alterTable('jobs').addColumn('outcome_seq', 'integer').execute();
  // Not partial: MAX(outcome_seq) can use it; NULLs do not collide in a UNIQUE index.
  await db.schema
    .createIndex('jobs_outcome_seq_idx')
    .unique()
    .on('jobs')
    .column('outcome_seq')
    .execute();
  // "Is a job of this run active?" runs on every claim.
  await db.schema
    .createIndex('jobs_run_state_idx')
    .on('jobs')
    .columns(['run_id', 'state'])
    .execute();
}

/** Removes what `up` added. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('jobs_run_state_idx').execute();
  await db.schema.dropIndex('jobs_outcome_seq_idx').execute();
  for (const column of ['outcome_seq', 'lost', 'cancel_requested_at', 'lease_count']) {
    await db.schema.alterTable('jobs').dropColumn(column).execute();
  }
}
