/**
 * 0010_console_indexes: what the web console's runs list and audit page filter on (issue 17).
 * The runs index gains the run's specification (its first 500 characters, for search; rows
 * indexed before this migration have none until the run changes again) and one index per filter,
 * each ending in `updated_at` so a filtered page is read in order without sorting; the audit log
 * gains indexes for its actor, action and chat filters.
 */
import { type Kysely, sql } from 'kysely';

const RUN_INDEXES = [
  ['runs_updated_idx', ['updated_at', 'id']],
  ['runs_workflow_idx', ['workflow_id', 'updated_at']],
  ['runs_workspace_updated_idx', ['workspace', 'updated_at']],
  ['runs_started_by_idx', ['started_by', 'updated_at']],
] as const;

const AUDIT_INDEXES = [
  ['audit_actor_idx', ['actor', 'at']],
  ['audit_action_idx', ['action', 'at']],
  ['audit_chat_idx', ['chat_ref', 'at']],
] as const;

/** Adds `runs.spec` and the filter indexes. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('runs').addColumn('spec', 'text').execute();
  for (const [name, columns] of RUN_INDEXES) {
    await db.schema
      .createIndex(name)
      .on('runs')
      .columns([...columns])
      .execute();
  }
  for (const [name, columns] of AUDIT_INDEXES) {
    await db.schema
      .createIndex(name)
      .on('audit')
      .columns([...columns])
      .execute();
  }
  await sql`analyze`.execute(db);
}

/** Removes what `up` added. */
export async function down(db: Kysely<unknown>): Promise<void> {
  for (const [name] of [...RUN_INDEXES, ...AUDIT_INDEXES]) {
    await db.schema.dropIndex(name).ifExists().execute();
  }
  await db.schema.alterTable('runs').dropColumn('spec').execute();
}
