/**
 * 0001_initial: every bridge.db table. Frozen once released: change the schema in a new migration.
 * Tables are STRICT so a wrong type (an ISO string where ms are expected) fails instead of being
 * stored. Times are INTEGER ms since the epoch (*_at); JSON is TEXT (*_json).
 */
import { type Kysely, sql } from 'kysely';
import { dialectOf } from '../src/db/dialects/index.ts';

const strict = sql`strict`;

/** Creates the initial schema. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('channels')
    .addColumn('id', 'text', (c) => c.primaryKey().notNull())
    .addColumn('platform', 'text', (c) => c.notNull())
    .addColumn('display_name', 'text')
    .addColumn('config_json', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('created_at', 'integer', (c) => c.notNull())
    .modifyEnd(strict)
    .execute();

  await db.schema
    .createTable('agents')
    .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('engine', 'text', (c) =>
      c.notNull().check(sql`engine in ('command', 'claude', 'codex')`),
    )
    .addColumn('argv_json', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('model', 'text')
    .addColumn('env_json', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('timeout_ms', 'integer', (c) => c.check(sql`timeout_ms > 0`))
    .addColumn('prompt_via', 'text', (c) => c.check(sql`prompt_via in ('stdin', 'file')`))
    .addColumn('enabled', 'integer', (c) => c.notNull().defaultTo(1).check(sql`enabled in (0, 1)`))
    .addColumn('created_at', 'integer', (c) => c.notNull())
    .addColumn('updated_at', 'integer', (c) => c.notNull())
    .modifyEnd(strict)
    .execute();

  // thread '' is the chat-wide binding: NULLs are all distinct in a UNIQUE constraint.
  // AUTOINCREMENT so a removed binding's id (named in audit entries) is never reused.
  await db.schema
    .createTable('bindings')
    .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
    .addColumn('chat_ref', 'text', (c) => c.notNull())
    .addColumn('thread', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('workspace', 'text', (c) => c.notNull())
    .addColumn('default_workflow', 'text')
    .addColumn('default_agent', 'text')
    .addColumn('notify_json', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('created_at', 'integer', (c) => c.notNull())
    .addColumn('updated_at', 'integer', (c) => c.notNull())
    .addUniqueConstraint('bindings_chat_thread_unique', ['chat_ref', 'thread'])
    .modifyEnd(strict)
    .execute();

  // scope is computed from binding_id so it can never disagree with it, and is never NULL.
  // Postgres wants an immutable expression: binding_id cast to text (SQLite: as written).
  const asText = dialectOf(db).asText;
  const binding = sql.raw('binding_id');
  await db.schema
    .createTable('allowlist')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('binding_id', 'integer', (c) => c.references('bindings.id').onDelete('cascade'))
    .addColumn('scope', 'text', (c) =>
      c.generatedAlwaysAs(
        sql`case when binding_id is null then 'global' else 'binding:' || ${asText(binding)} end`,
      ),
    )
    .addColumn('platform', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('role', 'text', (c) =>
      c.notNull().check(sql`role in ('viewer', 'operator', 'approver', 'admin')`),
    )
    .addColumn('created_at', 'integer', (c) => c.notNull())
    .addUniqueConstraint('allowlist_scope_user_unique', ['scope', 'platform', 'user_id'])
    .modifyEnd(strict)
    .execute();
  await db.schema
    .createIndex('allowlist_user_idx')
    .on('allowlist')
    .columns(['platform', 'user_id'])
    .execute();

  await db.schema
    .createTable('runs')
    .addColumn('id', 'text', (c) => c.primaryKey().notNull())
    .addColumn('workflow_id', 'text', (c) => c.notNull())
    .addColumn('workspace', 'text', (c) => c.notNull())
    .addColumn('layout', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) =>
      c
        .notNull()
        .check(
          sql`status in ('active', 'awaiting', 'blocked', 'completed', 'failed', 'cancelled')`,
        ),
    )
    .addColumn('started_by', 'text')
    .addColumn('origin_chat', 'text')
    .addColumn('created_at', 'integer', (c) => c.notNull())
    .addColumn('updated_at', 'integer', (c) => c.notNull())
    .addColumn('finished_at', 'integer')
    .modifyEnd(strict)
    .execute();
  await db.schema
    .createIndex('runs_status_idx')
    .on('runs')
    .columns(['status', 'updated_at'])
    .execute();

  // message_ref is NULL between storing the token and the platform answering the send.
  await db.schema
    .createTable('checkpoint_messages')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('run_id', 'text', (c) => c.notNull().references('runs.id').onDelete('cascade'))
    .addColumn('checkpoint_id', 'text', (c) => c.notNull())
    .addColumn('chat_ref', 'text', (c) => c.notNull())
    .addColumn('message_ref', 'text')
    .addColumn('button_token', 'text', (c) => c.notNull().unique())
    .addColumn('state', 'text', (c) =>
      c.notNull().defaultTo('open').check(sql`state in ('open', 'decided', 'expired')`),
    )
    .addColumn('created_at', 'integer', (c) => c.notNull())
    .addColumn('updated_at', 'integer', (c) => c.notNull())
    .modifyEnd(strict)
    .execute();
  await db.schema
    .createIndex('checkpoint_messages_checkpoint_idx')
    .on('checkpoint_messages')
    .columns(['run_id', 'checkpoint_id'])
    .execute();

  // No foreign key to runs: the queue must work on its own (and a worker may see a job first).
  await db.schema
    .createTable('jobs')
    .addColumn('id', 'text', (c) => c.primaryKey().notNull())
    .addColumn('run_id', 'text', (c) => c.notNull())
    .addColumn('step_id', 'text', (c) => c.notNull())
    .addColumn('attempt', 'integer', (c) => c.notNull())
    .addColumn('state', 'text', (c) =>
      c.notNull().check(sql`state in ('waiting', 'active', 'completed', 'failed', 'cancelled')`),
    )
    .addColumn('payload_json', 'text', (c) => c.notNull())
    .addColumn('available_at', 'integer', (c) => c.notNull())
    .addColumn('lease_owner', 'text')
    .addColumn('lease_expires_at', 'integer')
    .addColumn('created_at', 'integer', (c) => c.notNull())
    .addColumn('started_at', 'integer')
    .addColumn('finished_at', 'integer')
    .addColumn('exit_code', 'integer')
    .addColumn('tokens_in', 'integer')
    .addColumn('tokens_out', 'integer')
    .addColumn('cost_usd', 'real')
    .addColumn('error', 'text')
    .addColumn('result_json', 'text')
    .modifyEnd(strict)
    .execute();
  await db.schema
    .createIndex('jobs_state_available_idx')
    .on('jobs')
    .columns(['state', 'available_at'])
    .execute();

  await db.schema
    .createTable('audit')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('at', 'integer', (c) => c.notNull())
    .addColumn('actor', 'text', (c) => c.notNull())
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('target', 'text')
    .addColumn('chat_ref', 'text')
    .addColumn('outcome', 'text', (c) =>
      c.notNull().check(sql`outcome in ('allowed', 'refused', 'failed')`),
    )
    .addColumn('detail', 'text')
    .modifyEnd(strict)
    .execute();
  await db.schema.createIndex('audit_at_idx').on('audit').column('at').execute();

  await db.schema
    .createTable('pairing_codes')
    .addColumn('code_hash', 'text', (c) => c.primaryKey().notNull())
    .addColumn('expires_at', 'integer', (c) => c.notNull())
    .addColumn('used_at', 'integer')
    .addColumn('created_at', 'integer', (c) => c.notNull())
    .modifyEnd(strict)
    .execute();
}

/** Drops every table of the initial schema (children first). */
export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of [
    'pairing_codes',
    'audit',
    'jobs',
    'checkpoint_messages',
    'runs',
    'allowlist',
    'bindings',
    'agents',
    'channels',
  ]) {
    await db.schema.dropTable(table).execute();
  }
}
