/**
 * 0004_change_feed: how a running bridge learns of commits made by other processes.
 * - run_changes: one row per accepted commit, from whichever process made it (CLI, worker
 *   results, a hand edit turned into a command). Only a wake-up signal: the ledger stays the truth.
 * - run_feed: per run, the ledger seq whose events the bridge's chats have been shown (the
 *   persisted cursor): at start-up everything after it is replayed, so no chat is left stale.
 */
import { type Kysely, sql } from 'kysely';

/** Creates the feed tables. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('run_changes')
    .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
    .addColumn('run_id', 'text', (c) => c.notNull())
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('pid', 'integer', (c) => c.notNull())
    .addColumn('at', 'integer', (c) => c.notNull())
    .modifyEnd(sql`strict`)
    .execute();
  await db.schema
    .createIndex('run_changes_run_idx')
    .on('run_changes')
    .columns(['run_id', 'seq'])
    .execute();
  await db.schema
    .createTable('run_feed')
    .addColumn('run_id', 'text', (c) => c.primaryKey())
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('updated_at', 'integer', (c) => c.notNull())
    .modifyEnd(sql`strict`)
    .execute();
}

/** Removes what `up` added. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('run_feed').execute();
  await db.schema.dropTable('run_changes').execute();
}
