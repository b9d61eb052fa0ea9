/**
 * bridge.db on every dialect, for the repository and contract suites: `describe.each(DIALECT_NAMES)`
 * and `testDbOn(name)` (or `useContractDb`) give each test a fresh migrated database with the
 * repositories over it.
 * SQLite is a file in a temp folder; Postgres is a new database on the test process's shared
 * server (`sharedPostgres`, test/support/postgres.ts), copied from a database migrated once per
 * process, and dropped when its file is done. Without the Postgres
 * binaries the Postgres cases skip with one line, except in CI, where they fail.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, it } from 'vitest';
import { migrateToLatest, openBridgeDb } from '../../../src/db/connection.ts';
import type { DialectName } from '../../../src/db/dialects/index.ts';
import { openPostgresDb } from '../../../src/db/dialects/postgres/connection.ts';
import type { AnyBridgeDb } from '../../../src/db/migrator.ts';
import { createRepositories, type Repositories } from '../../../src/db/repositories/index.ts';
import {
  NO_POSTGRES_LINE,
  type PostgresHandle,
  postgresBinDir,
  sharedPostgres,
} from '../../support/postgres.ts';
import { inCi } from '../../support/redis.ts';
import { slow } from '../../support/slowdown.ts';

/** Every dialect the contract suites run on. */
export const DIALECT_NAMES: readonly DialectName[] = ['sqlite', 'postgres'];

/** Whether Postgres cases can run here. */
export const POSTGRES_AVAILABLE = postgresBinDir() !== undefined;

/** One test's migrated database on one dialect. */
export interface DialectTestDb {
  db: AnyBridgeDb;
  repos: Repositories;
  /** A settable clock shared by every repository. */
  clock: { now: number };
  /** A second connection to the same database, migrated (another process, or a restart). */
  reopen(): Promise<AnyBridgeDb>;
  /** Closes every connection and removes the database's folder (SQLite). */
  cleanup(): Promise<void>;
}

/**
 * Registers, in the enclosing describe, what `dialect` needs (Postgres: the shared server) and
 * returns the function that opens a fresh migrated database for one test. Returns undefined
 * after registering a skip (or, in CI, a failure) when the dialect cannot be had here.
 */
export function testDbOn(dialect: DialectName): (() => Promise<DialectTestDb>) | undefined {
  if (dialect === 'postgres') {
    if (!POSTGRES_AVAILABLE) {
      if (inCi()) {
        it('needs postgres in CI', () => {
          throw new Error(`${NO_POSTGRES_LINE} (.ci/run installs it)`);
        });
      } else {
        console.warn(NO_POSTGRES_LINE);
        it.skip(NO_POSTGRES_LINE, () => {});
      }
      return undefined;
    }
    beforeAll(() => acquireServer(), slow(60_000));
    afterAll(() => releaseServer(), slow(30_000));
  }
  const open = dialect === 'sqlite' ? openSqlite : openPostgres;
  return async () => {
    const opened = await open();
    const clock = { now: 1_000_000 };
    const extra: AnyBridgeDb[] = [];
    return {
      db: opened.db,
      clock,
      repos: createRepositories(opened.db, { now: () => clock.now }),
      async reopen() {
        const db = await opened.reopen();
        extra.push(db);
        await migrateToLatest(db);
        return db;
      },
      async cleanup() {
        for (const db of extra.splice(0)) await db.close();
        await opened.dispose();
      },
    };
  };
}

/** `testDbOn` with the hooks too: each test reads its database with the returned function. */
export function useContractDb(dialect: DialectName): (() => DialectTestDb) | undefined {
  const open = testDbOn(dialect);
  if (open === undefined) return undefined;
  let current: DialectTestDb | undefined;
  beforeEach(async () => {
    current = await open();
  }, slow(30_000));
  afterEach(async () => {
    await current?.cleanup();
    current = undefined;
  });
  return () => {
    if (current === undefined) throw new Error('useContractDb: read the database inside a test');
    return current;
  };
}

/** A database of one dialect: its first connection, how to open another, how to dispose of it. */
interface Opened {
  db: AnyBridgeDb;
  reopen(): Promise<AnyBridgeDb>;
  dispose(): Promise<void>;
}

async function openSqlite(): Promise<Opened> {
  const dir = mkdtempSync(join(tmpdir(), 'pb-contract-'));
  const file = join(dir, 'bridge.db');
  const db = openBridgeDb({ file });
  await migrateToLatest(db);
  return {
    db,
    reopen: async () => openBridgeDb({ file }),
    dispose: async () => {
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * The migrated template every test database copies, made once per process on the process's
 * shared server (test/support/postgres.ts): a fork running twenty Postgres files migrates once.
 */
let template: Promise<string> | undefined;
/** This file's handle on the shared server (its databases are dropped when the file is done). */
let server: Promise<PostgresHandle> | undefined;
let users = 0;

/** Takes this file's handle on the shared server and makes the template on first use. */
async function acquireServer(): Promise<void> {
  users += 1;
  server ??= sharedPostgres();
  template ??= migratedTemplate();
  const [handle, made] = [server, template];
  try {
    await Promise.all([handle, made]);
  } catch (err) {
    // A failed start is not kept: the next file tries again.
    if (server === handle) server = undefined;
    if (template === made) template = undefined;
    throw err;
  }
}

/** A database migrated to the latest migration, on a handle never stopped: it outlives files. */
async function migratedTemplate(): Promise<string> {
  const url = await (await sharedPostgres()).createDatabase();
  const db = await openPostgresDb({ url, maxConnections: 1 });
  try {
    await migrateToLatest(db);
  } finally {
    await db.close();
  }
  return new URL(url).pathname.slice(1);
}

/** Drops this file's databases when the last describe using them is done. */
async function releaseServer(): Promise<void> {
  users -= 1;
  if (users > 0 || server === undefined) return;
  const handle = await server;
  server = undefined;
  await handle.stop();
}

async function openPostgres(): Promise<Opened> {
  if (server === undefined || template === undefined) {
    throw new Error('useContractDb: the postgres server is not started');
  }
  const handle = await server;
  const url = await handle.createDatabase(await template);
  const db = await openPostgresDb({ url, maxConnections: 4 });
  return {
    db,
    reopen: () => openPostgresDb({ url, maxConnections: 2 }),
    dispose: () => db.close(),
  };
}
