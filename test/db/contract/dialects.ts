/**
 * bridge.db on every dialect, for the repository and contract suites: `describe.each(DIALECT_NAMES)`
 * and `testDbOn(name)` (or `useContractDb`) give each test a fresh migrated database with the
 * repositories over it.
 * SQLite is a file in a temp folder; Postgres is a new database on one private server per test
 * file (test/support/postgres.ts), copied from a database migrated once. Without the Postgres
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
  startPostgres,
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
 * Registers, in the enclosing describe, what `dialect` needs (Postgres: this file's server) and
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

/** This test file's server and its migrated template database, shared by its describes. */
let server: Promise<{ handle: PostgresHandle; template: string }> | undefined;
let users = 0;

/** Starts the server (once per file) and migrates the template every test database copies. */
async function acquireServer(): Promise<void> {
  users += 1;
  server ??= (async () => {
    const handle = await startPostgres();
    const templateUrl = await handle.createDatabase();
    const db = await openPostgresDb({ url: templateUrl, maxConnections: 1 });
    await migrateToLatest(db);
    await db.close();
    return { handle, template: new URL(templateUrl).pathname.slice(1) };
  })();
  await server;
}

/** Stops the server when the last describe using it is done. */
async function releaseServer(): Promise<void> {
  users -= 1;
  if (users > 0 || server === undefined) return;
  const { handle } = await server;
  server = undefined;
  await handle.stop();
}

async function openPostgres(): Promise<Opened> {
  if (server === undefined) throw new Error('useContractDb: the postgres server is not started');
  const { handle, template } = await server;
  const url = await handle.createDatabase(template);
  const db = await openPostgresDb({ url, maxConnections: 4 });
  return {
    db,
    reopen: () => openPostgresDb({ url, maxConnections: 2 }),
    dispose: () => db.close(),
  };
}
