/**
 * 0014_agent_permissions: a named agent's permission posture (issue 21) and the workspaces whose
 * admin allowed `permissions: full` there (deny by default: a workspace not listed runs no
 * full-access step).
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
}

/** Removes what `up` added. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('full_access_workspaces').execute();
  await db.schema.alterTable('agents').dropColumn('permissions_json').execute();
}
