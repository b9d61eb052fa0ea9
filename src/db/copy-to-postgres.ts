/**
 * `phasebridge migrate --to postgres`: copies every table of a SQLite bridge.db into an empty,
 * migrated Postgres database in ONE transaction, then reads both back row by row and compares
 * them before committing, so a copy that does not match leaves Postgres as it was. The SQLite
 * file is brought to the latest schema (as `migrate` does), otherwise only read.
 */
import type Database from 'better-sqlite3';
import { type Kysely, sql, type Transaction } from 'kysely';
import { CorruptStateError, InvalidInputError } from '../errors.ts';
import type { PostgresDb } from './dialects/postgres/connection.ts';
import type { BridgeDb } from './dialects/sqlite/connection.ts';
import { migrateToLatest } from './migrator.ts';
import type { Database as Schema } from './schema.ts';

/** Tables that are bookkeeping, not bridge state (the target's own migrator writes its copy). */
const SKIPPED = new Set(['kysely_migration', 'kysely_migration_lock']);

/** Rows per INSERT: far below Postgres's 65535 parameters for our widest table. */
const BATCH = 200;

/** One table copied and verified. */
export interface CopiedTable {
  table: string;
  rows: number;
}

/** One table's shape, read from SQLite. */
interface TableShape {
  name: string;
  /** Stored columns (generated ones are recomputed by Postgres). */
  columns: string[];
  /** Primary-key columns, in key order (the order rows are compared in). */
  key: string[];
  /** The integer identity column, when the table has one (its sequence is moved past the ids). */
  identity?: string;
}

/**
 * Copies `source` into `target` and verifies it. Both are migrated to the latest schema first.
 * Refuses (changing nothing) a target that already holds bridge rows: it never merges.
 */
export async function copyToPostgres(source: BridgeDb, target: PostgresDb): Promise<CopiedTable[]> {
  await migrateToLatest(source);
  await migrateToLatest(target);
  const tables = sortByReferences(source.sqlite, readShapes(source.sqlite));
  const occupied = await nonEmptyTables(target.kysely, tables);
  if (occupied.length > 0) {
    throw new InvalidInputError(
      `the Postgres database at ${target.where} already holds bridge data (${occupied.join(', ')}): copy into an empty database, nothing was copied`,
    );
  }
  return target.kysely.transaction().execute(async (tx) => {
    const copied: CopiedTable[] = [];
    for (const table of tables) {
      const rows = source.sqlite
        .prepare(`select ${table.columns.map(quote).join(', ')} from ${quote(table.name)}`)
        .all() as Record<string, unknown>[];
      for (let i = 0; i < rows.length; i += BATCH) {
        await tx
          .insertInto(table.name as keyof Schema)
          .values(rows.slice(i, i + BATCH) as never)
          .execute();
      }
      if (table.identity !== undefined) {
        await moveSequence(tx, table, sequenceFloor(source.sqlite, table.name));
      }
      await verify(source.sqlite, tx, table);
      copied.push({ table: table.name, rows: rows.length });
    }
    return copied;
  });
}

/** Every bridge table's stored columns, key and identity column, from SQLite's catalogue. */
function readShapes(sqlite: Database.Database): TableShape[] {
  const names = sqlite
    .prepare("select name from sqlite_master where type = 'table' order by name")
    .all() as { name: string }[];
  return (
    names
      // sqlite_* are SQLite's own (sequence, ANALYZE statistics).
      .filter(({ name }) => !SKIPPED.has(name) && !name.startsWith('sqlite_'))
      .map(({ name }) => {
        const info = sqlite.prepare(`pragma table_xinfo(${quote(name)})`).all() as {
          name: string;
          type: string;
          pk: number;
          hidden: number;
        }[];
        // hidden 2 and 3 are generated columns.
        const stored = info.filter((c) => c.hidden === 0);
        const key = stored
          .filter((c) => c.pk > 0)
          .sort((a, b) => a.pk - b.pk)
          .map((c) => c.name);
        const pk = stored.filter((c) => c.pk > 0);
        const identity =
          pk.length === 1 && pk[0]!.type.toLowerCase() === 'integer' ? pk[0]!.name : undefined;
        return {
          name,
          columns: stored.map((c) => c.name),
          key: key.length > 0 ? key : stored.map((c) => c.name),
          ...(identity === undefined ? {} : { identity }),
        };
      })
  );
}

/** Tables ordered so a table comes after every table its foreign keys point at. */
function sortByReferences(sqlite: Database.Database, shapes: TableShape[]): TableShape[] {
  const byName = new Map(shapes.map((s) => [s.name, s]));
  const sorted: TableShape[] = [];
  const placed = new Set<string>();
  const visit = (shape: TableShape, path: Set<string>): void => {
    if (placed.has(shape.name)) return;
    if (path.has(shape.name))
      throw new CorruptStateError(`bridge.db: foreign keys form a cycle at ${shape.name}`);
    path.add(shape.name);
    const parents = sqlite.prepare(`pragma foreign_key_list(${quote(shape.name)})`).all() as {
      table: string;
    }[];
    for (const { table } of parents) {
      const parent = byName.get(table);
      if (parent !== undefined && parent.name !== shape.name) visit(parent, path);
    }
    placed.add(shape.name);
    sorted.push(shape);
  };
  for (const shape of shapes) visit(shape, new Set());
  return sorted;
}

/** The tables of `tables` that hold at least one row in Postgres. */
async function nonEmptyTables(db: Kysely<Schema>, tables: TableShape[]): Promise<string[]> {
  const occupied: string[] = [];
  for (const table of tables) {
    const row = await sql<{ one: number }>`select 1 as one from ${sql.table(table.name)} limit 1`
      .execute(db)
      .then((r) => r.rows[0]);
    if (row !== undefined) occupied.push(table.name);
  }
  return occupied;
}

/**
 * The next id SQLite would give (AUTOINCREMENT never reuses a removed row's id, which audit
 * entries may name): past both the largest id and sqlite_sequence.
 */
function sequenceFloor(sqlite: Database.Database, table: string): number {
  const hasSequence = sqlite
    .prepare("select 1 from sqlite_master where type = 'table' and name = 'sqlite_sequence'")
    .get();
  if (hasSequence === undefined) return 0;
  const row = sqlite.prepare('select seq from sqlite_sequence where name = ?').get(table) as
    | { seq: number }
    | undefined;
  return row?.seq ?? 0;
}

/** Moves the identity sequence past every copied id (and past SQLite's own sequence). */
async function moveSequence(
  tx: Transaction<Schema>,
  table: TableShape,
  floor: number,
): Promise<void> {
  const id = sql.ref(table.identity!);
  await sql`select setval(pg_get_serial_sequence(${table.name}, ${table.identity!}),
      greatest(coalesce((select max(${id}) from ${sql.table(table.name)}), 0), ${floor}) + 1, false)`.execute(
    tx,
  );
}

/**
 * Reads the table from both databases and compares every row, column by column, matched by key
 * (not by sort order: Postgres may collate text differently); the first difference aborts the
 * copy and the transaction rolls back.
 */
async function verify(
  sqlite: Database.Database,
  tx: Transaction<Schema>,
  table: TableShape,
): Promise<void> {
  const columns = table.columns.map(quote).join(', ');
  const from = sqlite.prepare(`select ${columns} from ${quote(table.name)}`).all() as Row[];
  const to = (await sql<Row>`select ${sql.raw(columns)} from ${sql.table(table.name)}`.execute(tx))
    .rows;
  const mismatch = (what: string) =>
    new CorruptStateError(`copy of ${table.name} does not match ${what}; nothing was copied`);
  if (from.length !== to.length) {
    throw mismatch(`(${from.length} rows in SQLite, ${to.length} in Postgres)`);
  }
  const keyOf = (row: Row) => JSON.stringify(table.key.map((k) => normal(row[k])));
  const copies = new Map<string, Row>(to.map((row) => [keyOf(row), row]));
  for (const row of from) {
    const key = keyOf(row);
    const copy = copies.get(key);
    if (copy === undefined) throw mismatch(`at key ${key} (missing in Postgres)`);
    for (const column of table.columns) {
      if (normal(row[column]) !== normal(copy[column])) {
        throw mismatch(`at key ${key}, column ${column}`);
      }
    }
  }
}

/** One row as either driver returns it. */
type Row = Record<string, unknown>;

/** A value compared across drivers: both give numbers, strings and null for our column types. */
function normal(value: unknown): unknown {
  return typeof value === 'bigint' ? Number(value) : value;
}

/** A quoted SQL identifier (our table and column names are plain, but never trust a catalogue). */
function quote(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}
