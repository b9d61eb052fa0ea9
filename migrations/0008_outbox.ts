/**
 * 0008_outbox: every outgoing chat send and edit, written before it is attempted (issue 15), so
 * a restart delivers what was queued and never repeats what the platform confirmed.
 */
import { type Kysely, sql } from 'kysely';

/** Creates `outbox` and the index of its open rows. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('outbox')
    .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
    .addColumn('platform', 'text', (c) => c.notNull())
    .addColumn('lane', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('send', 'edit')`))
    // A chat ref for a send, the message ref for an edit.
    .addColumn('target', 'text', (c) => c.notNull())
    .addColumn('payload_json', 'text', (c) => c.notNull())
    .addColumn('urgency', 'text', (c) =>
      c.notNull().check(sql`urgency in ('decision', 'notice', 'status')`),
    )
    .addColumn('state', 'text', (c) =>
      c.notNull().check(sql`state in ('pending', 'attempted', 'confirmed', 'failed')`),
    )
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('not_before', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('result_ref', 'text')
    .addColumn('error_code', 'text')
    .addColumn('error', 'text')
    .addColumn('created_at', 'integer', (c) => c.notNull())
    .addColumn('updated_at', 'integer', (c) => c.notNull())
    .modifyEnd(sql`strict`)
    .execute();
  await sql`create index outbox_open on outbox (platform, id) where state in ('pending', 'attempted')`.execute(
    db,
  );
}

/** Removes what `up` added. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('outbox').execute();
}
