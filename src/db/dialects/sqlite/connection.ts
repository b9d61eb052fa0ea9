/** Opens bridge.db as an embedded SQLite file (better-sqlite3 behind kysely's SqliteDialect). */
import { chmodSync, closeSync, openSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { ResourceError } from '../../../errors.ts';
import { makeDirs, resourceErrorOf, sqliteStorageError, systemError } from '../../../fs-errors.ts';
import { nativeBindingOption } from '../../../sqlite-addon.ts';
import type { Database as Schema } from '../../schema.ts';

/**
 * One open bridge.db. `kysely` and `sqlite` share ONE connection: a raw statement issued while a
 * kysely transaction is open (across an await) runs inside that transaction, so keep raw writes
 * out of async kysely transactions.
 */
export interface BridgeDb {
  /** Which dialect this is (src/db/dialects): the embedded default. */
  readonly dialect: 'sqlite';
  /** Typed query builder over the tables of `schema.ts`. */
  readonly kysely: Kysely<Schema>;
  /** The raw better-sqlite3 handle, for synchronous hot paths (e.g. the job queue). */
  readonly sqlite: Database.Database;
  /** Path of the database file (or ':memory:'). */
  readonly file: string;
  /** Closes the connection; a second call does nothing. */
  close(): Promise<void>;
}

/** Milliseconds a statement waits for another process's write lock before SQLITE_BUSY. */
export const BUSY_TIMEOUT_MS = 5000;

/**
 * Opens (creating when missing) bridge.db: the folder is created 0700 and the file 0600, since it
 * holds allowlists and pairing codes; WAL, foreign keys on, a busy timeout for other processes.
 * `file: ':memory:'` gives a private in-memory database (tests). A damaged or unusable file is a
 * one-line CorruptStateError/ResourceError naming it and the fix.
 */
export function openBridgeDb(opts: { file: string }): BridgeDb {
  const { file } = opts;
  if (file !== ':memory:') prepareFile(file);
  let sqlite: Database.Database;
  try {
    sqlite = new Database(file, nativeBindingOption());
  } catch (err) {
    throw sqliteStorageError(err, file) ?? err;
  }
  try {
    // busy_timeout first: switching a new file to WAL must wait for another process too.
    sqlite.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    sqlite.pragma('journal_mode = WAL');
    sqlite.pragma('foreign_keys = ON');
    // NORMAL is durable across application crashes in WAL mode; only power loss can lose the last commits.
    sqlite.pragma('synchronous = NORMAL');
    // A garbage file can pass the pragmas (they may not read a page); reading the schema cannot.
    sqlite.prepare('select count(*) from sqlite_master').get();
  } catch (err) {
    sqlite.close();
    throw sqliteStorageError(err, file) ?? err;
  }
  if (file !== ':memory:') tightenSidecars(file);
  const kysely = new Kysely<Schema>({ dialect: new SqliteDialect({ database: sqlite }) });
  let closed = false;
  return {
    dialect: 'sqlite',
    kysely,
    sqlite,
    file,
    async close() {
      if (closed) return;
      closed = true;
      await kysely.destroy();
      // kysely only closes the handle if it ever ran a query; raw-only users need this.
      if (sqlite.open) sqlite.close();
    },
  };
}

/** Creates the folder (0700) and an empty file (0600) before SQLite does it with the umask's modes. */
function prepareFile(file: string): void {
  const created = makeDirs(dirname(file), 0o700);
  if (created !== undefined) chmodSync(dirname(file), 0o700);
  try {
    // An empty file is a valid empty database; 'a' never truncates an existing one.
    closeSync(openSync(file, 'a', 0o600));
    // Tighten a file left with looser modes (e.g. by another tool).
    if ((statSync(file).mode & 0o077) !== 0) chmodSync(file, 0o600);
  } catch (err) {
    if (systemError(err)?.code === 'EISDIR') {
      throw new ResourceError(
        `${file} is a folder, but bridge.db must be a file: move the folder aside (a new bridge.db is then created) or set PHASEBRIDGE_HOME to another folder`,
        { cause: err },
      );
    }
    throw resourceErrorOf(err, file) ?? err;
  }
}

/** SQLite gives -wal/-shm the modes of bridge.db, but files left by another tool may be looser. */
function tightenSidecars(file: string): void {
  for (const sidecar of [`${file}-wal`, `${file}-shm`]) {
    try {
      if ((statSync(sidecar).mode & 0o077) !== 0) chmodSync(sidecar, 0o600);
    } catch {
      // Missing (not in WAL mode yet) or not ours to change: SQLite reports real problems itself.
    }
  }
}
