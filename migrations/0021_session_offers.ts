/**
 * 0021_session_offers: the chat messages offering an interrupted session (a `.coordinator/`
 * state that is not IDLE, a flow run left active or blocked) as Resume / Restart / Abort (issue
 * 14). Keyed by workspace, kind, session and the state it was offered in: announced once per
 * chat and state, each copy with its own button token, and decided once for every copy.
 */
import { type Kysely, sql } from 'kysely';

/** Creates `session_offers`. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('session_offers')
    .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
    .addColumn('workspace', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('session', 'text', (c) => c.notNull())
    .addColumn('session_state', 'text', (c) => c.notNull())
    .addColumn('chat_ref', 'text', (c) => c.notNull())
    .addColumn('message_ref', 'text')
    .addColumn('button_token', 'text', (c) => c.notNull().unique())
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('open'))
    .addColumn('decision', 'text')
    .addColumn('decided_by', 'text')
    .addColumn('decided_at', 'integer')
    .addColumn('created_at', 'integer', (c) => c.notNull())
    .addColumn('updated_at', 'integer', (c) => c.notNull())
    .modifyEnd(sql`strict`)
    .execute();
  await db.schema
    .createIndex('session_offers_by_session')
    .on('session_offers')
    .columns(['workspace', 'kind', 'session', 'session_state'])
    .execute();
}

/** Removes what `up` added. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('session_offers').execute();
}
