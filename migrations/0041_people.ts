/**
 * 0041_people (issue 29): the name each person was last seen under, by actor id, so decisions
 * stored with an id only (tool approvals, session offers, audit rows) name the person the way
 * every other message does ("@carol", not "telegram:3003").
 */
import type { Kysely } from 'kysely';

/** Creates `people`. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('people')
    .addColumn('actor_id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'integer', (c) => c.notNull())
    .execute();
}

/** Drops `people`. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('people').ifExists().execute();
}
