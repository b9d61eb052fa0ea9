/**
 * 0043_runs_keyset (issue 34): the console's runs list pages by a key (updated_at, id) instead of
 * an OFFSET, so each filter's index ends in both; the chat a run came from gets one too. A page
 * then reads its 50 rows from the index whatever the history behind them.
 */
import { type Kysely, sql } from 'kysely';

const KEYSET_INDEXES = [
  ['runs_status_key_idx', ['status', 'updated_at', 'id']],
  ['runs_workflow_key_idx', ['workflow_id', 'updated_at', 'id']],
  ['runs_workspace_key_idx', ['workspace', 'updated_at', 'id']],
  ['runs_started_by_key_idx', ['started_by', 'updated_at', 'id']],
  ['runs_origin_chat_key_idx', ['origin_chat', 'updated_at', 'id']],
] as const;

/** The 0001/0010 indexes the keyed ones replace (same leading columns, no id). */
const REPLACED = [
  ['runs_status_idx', ['status', 'updated_at']],
  ['runs_workflow_idx', ['workflow_id', 'updated_at']],
  ['runs_workspace_updated_idx', ['workspace', 'updated_at']],
  ['runs_started_by_idx', ['started_by', 'updated_at']],
] as const;

/** Adds the keyed indexes and drops the ones they cover. */
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const [name, columns] of KEYSET_INDEXES) {
    await db.schema
      .createIndex(name)
      .on('runs')
      .columns([...columns])
      .execute();
  }
  for (const [name] of REPLACED) await db.schema.dropIndex(name).ifExists().execute();
  await sql`analyze runs`.execute(db);
}

/** Restores the replaced indexes and drops the keyed ones. */
export async function down(db: Kysely<unknown>): Promise<void> {
  for (const [name, columns] of REPLACED) {
    await db.schema
      .createIndex(name)
      .ifNotExists()
      .on('runs')
      .columns([...columns])
      .execute();
  }
  for (const [name] of KEYSET_INDEXES) await db.schema.dropIndex(name).ifExists().execute();
}
