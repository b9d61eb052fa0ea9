/**
 * 0047_run_messages (issue 29): the bot's other messages about a run (the step's answer, the
 * run's outcome, an acknowledgement, a reason prompt, a status message once its run ended), so a
 * reply to one of them is never dropped unheard: kept as a note while the run is alive, answered
 * when it finished or its question expired. Kept 30 days (bridge retention).
 */
import type { Kysely } from 'kysely';

/** Creates `run_messages`. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('run_messages')
    .addColumn('message_ref', 'text', (c) => c.primaryKey())
    .addColumn('run_id', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('created_at', 'integer', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('run_messages_by_time')
    .on('run_messages')
    .column('created_at')
    .execute();
}

/** Drops what `up` created. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('run_messages').ifExists().execute();
}
