/**
 * 0039_outbox_owners (issue 39): a delivered send tells its owner, whatever process delivers it.
 * - outbox.owner_json: the row that asked for the call (a checkpoint copy, a status message, a
 *   session offer, a decision edit); the confirming transaction writes the message id back to it.
 * - outbox.dedupe_key: what a send is about (run, step, attempt…); a second send with the same key
 *   to the same chat finds the first one instead of being sent again (a restart replaying).
 * - checkpoint_messages.decision_shown: the copy's message shows its decision (no live buttons).
 */
import { type Kysely, sql } from 'kysely';

/** Adds the columns and the index of keyed sends. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('outbox').addColumn('owner_json', 'text').execute();
  await db.schema.alterTable('outbox').addColumn('dedupe_key', 'text').execute();
  await sql`create unique index outbox_dedupe on outbox (platform, target, dedupe_key) where dedupe_key is not null`.execute(
    db,
  );
  await db.schema
    .alterTable('checkpoint_messages')
    .addColumn('decision_shown', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  // Copies closed before this migration were edited by the process that closed them.
  await sql`update checkpoint_messages set decision_shown = 1 where state <> 'open'`.execute(db);
}

/** Removes what `up` added. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index if exists outbox_dedupe`.execute(db);
  await db.schema.alterTable('outbox').dropColumn('dedupe_key').execute();
  await db.schema.alterTable('outbox').dropColumn('owner_json').execute();
  await db.schema.alterTable('checkpoint_messages').dropColumn('decision_shown').execute();
}
