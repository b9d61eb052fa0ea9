/**
 * 0005_durable_chat_state: what the chats show no longer lives only in the bridge's memory.
 * - status_messages: per run and chat, the status message to edit (also after a restart).
 * - reason_prompts: a reject waiting for its reason (prompt + user -> run, checkpoint), with expiry.
 * - console_login_tokens / console_sessions: the web console's one-time login tokens and sessions,
 *   as SHA-256 digests only (a leaked bridge.db opens no console).
 * - channel_state: a small key/value store per platform, with expiry, for what an adapter keeps
 *   across a restart (the console's message history and prompts, Discord's reason prompts).
 */
import { type Kysely, sql } from 'kysely';

const strict = sql`strict`;

/** Creates the durable chat state tables. */
export async function up(db: Kysely<unknown>): Promise<void> {
  // No foreign key to runs: a run may be followed before the index has it (another process).
  await db.schema
    .createTable('status_messages')
    .addColumn('run_id', 'text', (c) => c.notNull())
    .addColumn('chat_ref', 'text', (c) => c.notNull())
    .addColumn('message_ref', 'text', (c) => c.notNull())
    .addColumn('created_at', 'integer', (c) => c.notNull())
    .addColumn('updated_at', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('status_messages_pk', ['run_id', 'chat_ref'])
    .modifyEnd(strict)
    .execute();

  await db.schema
    .createTable('reason_prompts')
    .addColumn('prompt_ref', 'text', (c) => c.notNull())
    .addColumn('platform', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('run_id', 'text', (c) => c.notNull())
    .addColumn('checkpoint_id', 'text', (c) => c.notNull())
    .addColumn('asked_at', 'integer', (c) => c.notNull())
    .addColumn('expires_at', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('reason_prompts_pk', ['prompt_ref', 'platform', 'user_id'])
    .modifyEnd(strict)
    .execute();

  await db.schema
    .createTable('console_login_tokens')
    .addColumn('token_hash', 'text', (c) => c.primaryKey().notNull())
    .addColumn('expires_at', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'integer', (c) => c.notNull())
    .modifyEnd(strict)
    .execute();

  // session_id is public (routing, logs); the cookie value is known by its digest only.
  await db.schema
    .createTable('console_sessions')
    .addColumn('cookie_hash', 'text', (c) => c.primaryKey().notNull())
    .addColumn('session_id', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', 'integer', (c) => c.notNull())
    .addColumn('last_seen_at', 'integer', (c) => c.notNull())
    .modifyEnd(strict)
    .execute();

  await db.schema
    .createTable('channel_state')
    .addColumn('platform', 'text', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('value', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'integer')
    .addColumn('updated_at', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('channel_state_pk', ['platform', 'key'])
    .modifyEnd(strict)
    .execute();
}

/** Removes what `up` added. */
export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of [
    'channel_state',
    'console_sessions',
    'console_login_tokens',
    'reason_prompts',
    'status_messages',
  ]) {
    await db.schema.dropTable(table).execute();
  }
}
