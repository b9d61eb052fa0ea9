/**
 * 0024_flow_run_cache: per workspace, what its flow runs' `run.yaml` files said when last read
 * (issue 14), so finding interrupted sessions at start-up and in `phasebridge sessions` does not
 * read every finished run: the stamp of `.flow/runs` when listed, the runs read every time
 * (active, blocked, …) and, as JSON read only when the listing changed, each finished run's
 * stamp (size, mtime, ctime, inode) and status.
 */
import { type Kysely, sql } from 'kysely';

/** Creates `flow_run_cache`. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('flow_run_cache')
    .addColumn('workspace', 'text', (c) => c.primaryKey())
    .addColumn('dir_stamp', 'text', (c) => c.notNull())
    .addColumn('open_json', 'text', (c) => c.notNull())
    .addColumn('entries_json', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'integer', (c) => c.notNull())
    .modifyEnd(sql`strict`)
    .execute();
}

/** Removes what `up` added. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('flow_run_cache').execute();
}
