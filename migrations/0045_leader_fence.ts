/**
 * 0045_leader_fence (issue 33): the fencing token of the leader lease. Several `serve` on one
 * Postgres and Redis elect a leader in Redis; each acquisition takes a new token (Redis INCR)
 * and writes it here, never lowering it. Writes that must not happen twice (the outbox's rows,
 * an inbound update) compare their process's token with this row in their own transaction, so
 * a paused old leader that wakes applies nothing. On SQLite (one bridge per file) the table
 * stays empty.
 */
import type { Kysely } from 'kysely';

/** Creates `leader_fence`. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('leader_fence')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('token', 'integer', (c) => c.notNull())
    .addColumn('holder', 'text', (c) => c.notNull())
    .addColumn('acquired_at', 'integer', (c) => c.notNull())
    .execute();
}

/** Drops what `up` created. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('leader_fence').ifExists().execute();
}
