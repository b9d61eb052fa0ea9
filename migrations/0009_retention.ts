/**
 * 0009_retention (issue 15): costs that grow with active work, not history.
 * - runs_workspace_idx: a workspace's index rows without a table scan (start-up's check for run
 *   folders the index misses reads ids only).
 * - runs_finished_idx, jobs_finished_idx: what `prune` and `archive` look for (finished before a
 *   cutoff) without a table scan; partial, so unfinished rows cost nothing.
 * - runs.archived_at: when `phasebridge archive` packed the run's folder into an archive (the
 *   index row stays, so `status <id>` can say where the run went).
 */
import { type Kysely, sql } from 'kysely';

/** Adds the indexes and `runs.archived_at`. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('runs_workspace_idx').on('runs').columns(['workspace']).execute();
  await db.schema
    .createIndex('runs_finished_idx')
    .on('runs')
    .columns(['finished_at'])
    .where(sql.ref('finished_at'), 'is not', null)
    .execute();
  await db.schema
    .createIndex('jobs_finished_idx')
    .on('jobs')
    .columns(['finished_at'])
    .where(sql.ref('finished_at'), 'is not', null)
    .execute();
  await db.schema.alterTable('runs').addColumn('archived_at', 'integer').execute();
}

/** Removes what `up` added. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('runs').dropColumn('archived_at').execute();
  await db.schema.dropIndex('jobs_finished_idx').execute();
  await db.schema.dropIndex('runs_finished_idx').execute();
  await db.schema.dropIndex('runs_workspace_idx').execute();
}
