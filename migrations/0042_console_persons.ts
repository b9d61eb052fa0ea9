/**
 * 0042_console_persons (issue 34): console sign-in through chat. A login token and a session may
 * name the chat person they sign in (`person_json`: platform, id, display, the chat whose roles
 * apply); NULL is the local admin `web:admin`. A person's session ends at `expires_at` whatever
 * its use; the local admin's has none (it ends when idle).
 */
import type { Kysely } from 'kysely';

/** Adds the person columns and the session expiry. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('console_login_tokens').addColumn('person_json', 'text').execute();
  await db.schema.alterTable('console_sessions').addColumn('person_json', 'text').execute();
  await db.schema.alterTable('console_sessions').addColumn('expires_at', 'integer').execute();
}

/** Removes what `up` added. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('console_sessions').dropColumn('expires_at').execute();
  await db.schema.alterTable('console_sessions').dropColumn('person_json').execute();
  await db.schema.alterTable('console_login_tokens').dropColumn('person_json').execute();
}
