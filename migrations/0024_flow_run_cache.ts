/**
 * 0024_flow_run_cache: what each flow run's `run.yaml` said when last read (its stamp: size,
 * mtime, ctime, inode; and its `state.status`), so finding interrupted sessions at start-up and
 * in `phasebridge sessions` skips finished runs whose file did not change (issue 14).
 */
import { type Kysely, sql } from 'kysely';

/** Creates `flow_run_cache`. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('flow_run_cache')
    .addColumn('workspace', 'text', (c) => c.notNull())
    .addColumn('run_id', 'text', (c) => c.notNull())
    .addColumn('stamp', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('flow_run_cache_pk', ['workspace', 'run_id'])
    .modifyEnd(sql`strict, without rowid`)
    .execute();
}

/** Removes what `up` added. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('flow_run_cache').execute();
}
