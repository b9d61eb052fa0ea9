import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kysely, SqliteDialect } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import * as jobQueueMigration from '../../../migrations/0002_job_queue.ts';
import { MIGRATIONS } from '../../../migrations/index.ts';
import { type BridgeDb, migrateToLatest, openBridgeDb } from '../../../src/db/connection.ts';
import { hasCode } from '../../../src/errors.ts';
import { createSqliteQueue } from '../../../src/jobs/queue/sqlite-driver.ts';
import { defineQueueContract } from './contract.ts';

defineQueueContract('sqlite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'pb-sqlite-queue-'));
  const file = join(dir, 'bridge.db');
  return {
    // Short leases so a killed worker's job is taken again within about a second.
    config: (overrides) => ({
      driver: 'sqlite',
      file,
      options: {
        leaseMs: 1000,
        heartbeatMs: 100,
        pollMs: 25,
        maxLostRetries: overrides?.maxLostRetries ?? 2,
      },
    }),
    leaseWaitMs: 1200,
    dispose: async () => rmSync(dir, { recursive: true, force: true }),
  };
});

describe('sqlite job queue', () => {
  let dir: string;
  let db: BridgeDb;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'pb-sqlite-queue-'));
    db = openBridgeDb({ file: join(dir, 'bridge.db') });
  });
  afterEach(async () => {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const migrateAll = () =>
    migrateToLatest(db, { migrations: { ...MIGRATIONS, '0002_job_queue': jobQueueMigration } });

  it('refuses a bridge.db without the job queue migration and says how to fix it', async () => {
    await migrateToLatest(db, { migrations: { '0001_initial': MIGRATIONS['0001_initial']! } });
    let error: unknown;
    try {
      createSqliteQueue({ db });
    } catch (err) {
      error = err;
    }
    expect(hasCode(error, 'CORRUPT_STATE')).toBe(true);
    expect((error as Error).message).toContain("run 'phasebridge migrate'");
  });

  it("stores the agent runner's exit code and usage in the jobs row", async () => {
    await migrateAll();
    const queue = createSqliteQueue({ db });
    const done = new Promise<void>((resolve) => queue.onOutcome(() => resolve()));
    await queue.startWorker(
      async () => ({ exitCode: 0, telemetry: { tokensIn: 1200, tokensOut: 340, costUsd: 0.02 } }),
      { concurrency: 1 },
    );
    const { id } = await queue.enqueue({ runId: 'r', stepId: 's', attempt: 1, payload: {} });
    await done;
    await queue.close();
    const row = db.sqlite
      .prepare(
        'SELECT exit_code, tokens_in, tokens_out, cost_usd, lease_owner FROM jobs WHERE id = ?',
      )
      .get(id);
    expect(row).toEqual({
      exit_code: 0,
      tokens_in: 1200,
      tokens_out: 340,
      cost_usd: 0.02,
      lease_owner: null,
    });
  });

  it('migration 0002 goes down and up again', async () => {
    await migrateAll();
    const kysely = new Kysely<unknown>({ dialect: new SqliteDialect({ database: db.sqlite }) });
    await jobQueueMigration.down(kysely);
    const columns = () =>
      (db.sqlite.prepare('PRAGMA table_info(jobs)').all() as { name: string }[]).map((c) => c.name);
    expect(columns()).not.toContain('outcome_seq');
    await jobQueueMigration.up(kysely);
    expect(columns()).toEqual(
      expect.arrayContaining(['lease_count', 'cancel_requested_at', 'lost', 'outcome_seq']),
    );
  });
});
