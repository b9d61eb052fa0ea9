/**
 * 0006_followed_workspaces: workspaces whose `.codexclaw/` a bridge follows read-only (issue 13),
 * with how far into `.codexclaw/ledger.jsonl` it has announced, so a restart neither repeats nor
 * skips rows.
 */
import { type Kysely, sql } from 'kysely';

/** Creates `followed_workspaces`. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('followed_workspaces')
    .addColumn('workspace', 'text', (c) => c.primaryKey().notNull())
    .addColumn('ledger_offset', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'integer', (c) => c.notNull())
    .addColumn('updated_at', 'integer', (c) => c.notNull())
    .modifyEnd(sql`strict`)
    .execute();
}

/** Removes what `up` added. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('followed_workspaces').execute();
}
