/**
 * 0003_job_signals: live signals of running jobs for processes other than the worker's (the
 * sqlite job queue's `onStarted` / `onProgress`).
 * - signal_seq: a strictly increasing number given each time a worker takes the job or its
 *   processor reports progress, so other processes poll new signals with one range query.
 * - progress_json: the latest progress report of the running job (JSON object), NULL after a take.
 */
import type { Kysely } from 'kysely';

/** Adds the signal columns and their index. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('jobs').addColumn('signal_seq', 'integer').execute();
  await db.schema.alterTable('jobs').addColumn('progress_json', 'text').execute();
  await db.schema
    .createIndex('jobs_signal_seq_idx')
    .unique()
    .on('jobs')
    .column('signal_seq')
    .execute();
}

/** Removes what `up` added. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('jobs_signal_seq_idx').execute();
  for (const column of ['progress_json', 'signal_seq']) {
    await db.schema.alterTable('jobs').dropColumn(column).execute();
  }
}
