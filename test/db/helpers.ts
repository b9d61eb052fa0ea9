/** A migrated bridge.db in a fresh temp folder, for db tests. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BridgeDb, migrateToLatest, openBridgeDb } from '../../src/db/connection.ts';
import { createRepositories, type Repositories } from '../../src/db/repositories/index.ts';

/** An open test database and how to dispose of it. */
export interface TestDb {
  dir: string;
  file: string;
  db: BridgeDb;
  repos: Repositories;
  /** A settable clock shared by every repository. */
  clock: { now: number };
  cleanup(): Promise<void>;
}

/** A new temp folder (removed by the caller). */
export function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'phasebridge-db-'));
}

/** Opens and migrates bridge.db in a new temp folder; the clock starts at 1_000_000. */
export async function openTestDb(): Promise<TestDb> {
  const dir = tempDir();
  const file = join(dir, 'home', 'bridge.db');
  const db = openBridgeDb({ file });
  await migrateToLatest(db);
  const clock = { now: 1_000_000 };
  const repos = createRepositories(db, { now: () => clock.now });
  return {
    dir,
    file,
    db,
    repos,
    clock,
    async cleanup() {
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
