/**
 * 0012_unreachable_chats: chats a platform refuses us in (bot removed, permission lost, channel
 * archived), with the platform's reason, so the bridge stops posting there, tells people once,
 * and `doctor` and `/readyz` can name them (issue 20).
 */
import { type Kysely, sql } from 'kysely';

/** Creates `unreachable_chats`. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('unreachable_chats')
    .addColumn('chat_ref', 'text', (c) => c.primaryKey().notNull())
    .addColumn('reason', 'text', (c) => c.notNull())
    .addColumn('detail', 'text', (c) => c.notNull())
    .addColumn('since', 'integer', (c) => c.notNull())
    .addColumn('updated_at', 'integer', (c) => c.notNull())
    .modifyEnd(sql`strict`)
    .execute();
}

/** Removes what `up` added. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('unreachable_chats').execute();
}
