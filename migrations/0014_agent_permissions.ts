/**
 * 0014_agent_permissions: a named agent's permission posture (issue 21), the workspaces whose
 * admin allowed `permissions: full` there (deny by default: a workspace not listed runs no
 * full-access step), and the tool approvals Claude asks for with `permissions: ask` (written by
 * the approval MCP server in the agent's process tree, decided by people through the bridge).
 */
import { type Kysely, sql } from 'kysely';

/** Adds `agents.permissions_json` and creates `full_access_workspaces`. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('agents').addColumn('permissions_json', 'text').execute();
  await db.schema
    .createTable('full_access_workspaces')
    .addColumn('workspace', 'text', (c) => c.primaryKey().notNull())
    .addColumn('allowed_by', 'text', (c) => c.notNull())
    .addColumn('created_at', 'integer', (c) => c.notNull())
    .modifyEnd(sql`strict`)
    .execute();
  await db.schema
    .createTable('tool_approvals')
    .addColumn('id', 'text', (c) => c.primaryKey().notNull())
    .addColumn('run_id', 'text', (c) => c.notNull())
    .addColumn('step_id', 'text', (c) => c.notNull())
    .addColumn('attempt', 'integer', (c) => c.notNull())
    .addColumn('tool', 'text', (c) => c.notNull())
    .addColumn('input_json', 'text', (c) => c.notNull())
    .addColumn('summary', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) =>
      c.notNull().check(sql`status in ('pending', 'allowed', 'denied')`),
    )
    .addColumn('scope', 'text', (c) => c.check(sql`scope in ('once', 'run')`))
    .addColumn('rule', 'text')
    .addColumn('reason', 'text')
    .addColumn('decided_by', 'text')
    .addColumn('created_at', 'integer', (c) => c.notNull())
    .addColumn('expires_at', 'integer', (c) => c.notNull())
    .addColumn('decided_at', 'integer')
    .modifyEnd(sql`strict`)
    .execute();
  await db.schema
    .createIndex('tool_approvals_by_run')
    .on('tool_approvals')
    .columns(['run_id', 'status'])
    .execute();
}

/** Removes what `up` added. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('tool_approvals').execute();
  await db.schema.dropTable('full_access_workspaces').execute();
  await db.schema.alterTable('agents').dropColumn('permissions_json').execute();
}
