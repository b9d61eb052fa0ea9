/**
 * What `/readyz` and `/metrics` read of bridge.db, on either dialect. SQLite keeps its raw
 * synchronous statements on the shared handle (a probe never queues behind a kysely transaction
 * held across an await); Postgres asks through kysely's pool.
 */
import { sql } from 'kysely';
import type { AnyBridgeDb } from './migrator.ts';

/** True when bridge.db answers a trivial query (the `/readyz` probe); throws when it cannot. */
export async function bridgeDbAnswers(db: AnyBridgeDb): Promise<boolean> {
  if (db.dialect === 'sqlite') return db.sqlite.prepare('select 1').get() !== undefined;
  const { rows } = await sql<{ one: number }>`select 1 as one`.execute(db.kysely);
  return rows.length === 1;
}

/** Rows of `table` counted by `column` (runs by status, jobs by state), for `/metrics`. */
export async function countsBy(
  db: AnyBridgeDb,
  table: 'runs' | 'jobs',
  column: 'status' | 'state',
): Promise<Record<string, number>> {
  let rows: { k: string; n: number }[];
  if (db.dialect === 'sqlite') {
    rows = db.sqlite
      .prepare(`select ${column} as k, count(*) as n from ${table} group by ${column}`)
      .all() as { k: string; n: number }[];
  } else {
    const res = await sql<{ k: string; n: number }>`select ${sql.ref(column)} as k, count(*) as n
      from ${sql.table(table)} group by ${sql.ref(column)}`.execute(db.kysely);
    rows = res.rows;
  }
  return Object.fromEntries(rows.map((r) => [r.k, Number(r.n)]));
}
