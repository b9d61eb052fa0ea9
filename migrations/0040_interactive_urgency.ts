/**
 * 0040_interactive_urgency (issue 31): outbox.urgency takes `interactive`, the call a person is
 * waiting for (the edit of a pressed checkpoint, the reply to a command), which may use a chat's
 * short burst. SQLite cannot change a CHECK in place, so the table is rebuilt with its rows, ids
 * (and autoincrement sequence) and indexes; the migrator runs it in one transaction. Postgres
 * changes the CHECK in place.
 */
import { type Kysely, sql } from 'kysely';
import { type DialectName, dialectOf } from '../src/db/dialects/index.ts';

/** The columns of `outbox` as of 0039, in order. */
const COLUMNS = `id, platform, lane, kind, target, payload_json, urgency, state, attempts, not_before,
  result_ref, error_code, error, created_at, updated_at, owner_json, dedupe_key`;

/** Rebuilds `outbox` with `urgency` allowed to be one of `urgencies`. */
async function rebuild(db: Kysely<unknown>, urgencies: readonly string[]): Promise<void> {
  const allowed = sql.raw(urgencies.map((u) => `'${u}'`).join(', '));
  await sql`create table outbox_rebuilt (
      id integer primary key autoincrement,
      platform text not null,
      lane text not null,
      kind text not null check (kind in ('send', 'edit')),
      target text not null,
      payload_json text not null,
      urgency text not null check (urgency in (${allowed})),
      state text not null check (state in ('pending', 'attempted', 'confirmed', 'failed')),
      attempts integer default 0 not null,
      not_before integer default 0 not null,
      result_ref text,
      error_code text,
      error text,
      created_at integer not null,
      updated_at integer not null,
      owner_json text,
      dedupe_key text
    ) strict`.execute(db);
  await sql`insert into outbox_rebuilt (${sql.raw(COLUMNS)}) select ${sql.raw(COLUMNS)} from outbox`.execute(
    db,
  );
  await sql`drop table outbox`.execute(db);
  await sql`alter table outbox_rebuilt rename to outbox`.execute(db);
  await sql`create index outbox_open on outbox (platform, id) where state in ('pending', 'attempted')`.execute(
    db,
  );
  await sql`create unique index outbox_dedupe on outbox (platform, target, dedupe_key) where dedupe_key is not null`.execute(
    db,
  );
}

/** Postgres changes the CHECK in place (the constraint Postgres named for the column's CHECK). */
async function recheck(db: Kysely<unknown>, urgencies: readonly string[]): Promise<void> {
  const allowed = sql.raw(urgencies.map((u) => `'${u}'`).join(', '));
  await sql`alter table outbox drop constraint outbox_urgency_check,
    add constraint outbox_urgency_check check (urgency in (${allowed}))`.execute(db);
}

/** How each dialect changes the allowed urgencies. */
const CHANGE: Readonly<Record<DialectName, typeof rebuild>> = {
  sqlite: rebuild,
  postgres: recheck,
};

/** Allows `interactive` in outbox.urgency. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await CHANGE[dialectOf(db).name](db, ['interactive', 'decision', 'notice', 'status']);
}

/** Back to the three urgencies: an interactive row becomes a decision (the nearest below it). */
export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`update outbox set urgency = 'decision' where urgency = 'interactive'`.execute(db);
  await CHANGE[dialectOf(db).name](db, ['decision', 'notice', 'status']);
}
