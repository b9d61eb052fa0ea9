/**
 * Retention: finished jobs of finished runs and old audit rows leave bridge.db after their
 * retention; audit rows are exported as JSON Lines first, and a crash between the export and the
 * delete neither loses a row nor exports one twice. Jobs run through the real sqlite queue.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { pruneBridgeDb } from '../../src/db/retention.ts';
import type { JobQueue } from '../../src/jobs/queue/port.ts';
import { createSqliteQueue } from '../../src/jobs/queue/sqlite-driver.ts';
import { openTestDb, type TestDb } from './helpers.ts';

const DAY = 86_400_000;
const POLICY = { jobsMs: 30 * DAY, auditMs: 365 * DAY };

let t: TestDb;
let queue: JobQueue;
beforeEach(async () => {
  t = await openTestDb();
  queue = createSqliteQueue({ db: t.db, pollMs: 10 });
});
afterEach(async () => {
  await queue.close();
  await t.cleanup();
});

const exportDir = () => path.join(t.dir, 'home', 'audit');
const jobIds = () =>
  (t.db.sqlite.prepare('SELECT id FROM jobs ORDER BY id').all() as { id: string }[]).map(
    (r) => r.id,
  );

/** Enqueues jobs and runs them to completion, one after another (in the order given). */
async function finish(queue: JobQueue, specs: { runId: string; stepId: string }[]): Promise<void> {
  const worker = await queue.startWorker(async () => ({ ok: true, exitCode: 0 }), {
    concurrency: 1,
  });
  try {
    for (const s of specs) {
      const done = new Promise<void>((resolve) => {
        const off = queue.onOutcome((id) => {
          if (id === `${s.runId}:${s.stepId}:1`) {
            off();
            resolve();
          }
        });
      });
      await queue.enqueue({ ...s, attempt: 1, payload: {} });
      await done;
    }
  } finally {
    await worker.close();
  }
}

async function indexRun(id: string, status: 'completed' | 'awaiting') {
  await t.repos.runs.upsert({ id, workflowId: 'demo', workspace: '/ws', layout: 'native', status });
}

describe('pruneBridgeDb: jobs', () => {
  it('drops finished jobs of finished runs after the retention, keeps the rest', async () => {
    const done = '2026-01-01T000000Z-done';
    const open = '2026-01-01T000000Z-open';
    const gone = '2026-01-01T000000Z-unindexed';
    await indexRun(done, 'completed');
    await indexRun(open, 'awaiting');
    await finish(queue, [
      { runId: done, stepId: 'plan' },
      { runId: done, stepId: 'build' },
      { runId: gone, stepId: 'plan' },
      { runId: open, stepId: 'plan' },
    ]);
    await queue.enqueue({ runId: open, stepId: 'build', attempt: 1, payload: {} }); // waiting
    const before = jobIds();
    expect(before).toHaveLength(5);

    // Within the retention nothing goes.
    const early = await pruneBridgeDb(t.db, {
      policy: POLICY,
      exportDir: exportDir(),
      now: Date.now() + 29 * DAY,
    });
    expect(early.jobs).toBe(0);
    expect(jobIds()).toEqual(before);

    const dry = await pruneBridgeDb(t.db, {
      policy: POLICY,
      exportDir: exportDir(),
      now: Date.now() + 31 * DAY,
      dryRun: true,
    });
    expect(dry.jobs).toBe(3);
    expect(jobIds()).toEqual(before);

    const r = await pruneBridgeDb(t.db, {
      policy: POLICY,
      exportDir: exportDir(),
      now: Date.now() + 31 * DAY,
    });
    expect(r.jobs).toBe(3);
    // Kept: the unfinished run's finished job and its waiting one.
    expect(jobIds()).toEqual([`${open}:build:1`, `${open}:plan:1`]);
  });

  it('keeps the job holding the latest outcome number, so a new outcome is still delivered', async () => {
    const done = '2026-01-01T000000Z-done';
    await indexRun(done, 'completed');
    await finish(queue, [
      { runId: done, stepId: 'a' },
      { runId: done, stepId: 'b' },
    ]);
    // A queue of another process, running across the prune (it has seen every outcome so far).
    const other = createSqliteQueue({ db: t.db, pollMs: 10 });
    const heard: string[] = [];
    other.onOutcome((id) => heard.push(id));
    const r = await pruneBridgeDb(t.db, {
      policy: POLICY,
      exportDir: exportDir(),
      now: Date.now() + 31 * DAY,
    });
    expect(r.jobs).toBe(1);
    expect(jobIds()).toEqual([`${done}:b:1`]);
    await finish(queue, [{ runId: '2026-01-02T000000Z-next', stepId: 'a' }]);
    for (let i = 0; i < 200 && heard.length === 0; i++) {
      await new Promise((res) => setTimeout(res, 10));
    }
    await other.close();
    expect(heard).toEqual(['2026-01-02T000000Z-next:a:1']);
  });
});

describe('pruneBridgeDb: audit', () => {
  const old = Date.parse('2025-01-01T00:00:00Z');
  const now = Date.parse('2026-06-01T00:00:00Z');

  async function seed() {
    await t.repos.audit.record({
      at: old,
      actor: 'telegram:42',
      action: 'approve',
      target: 'run x',
      chatRef: 'telegram:1',
      outcome: 'allowed',
    });
    await t.repos.audit.record({
      at: old + 1000,
      actor: 'cli:bob',
      action: 'allow',
      outcome: 'refused',
      detail: 'not admin',
    });
    await t.repos.audit.record({
      at: now - DAY,
      actor: 'cli:alice',
      action: 'bind',
      outcome: 'allowed',
    });
  }

  it('exports rows older than the retention as JSON Lines, then deletes exactly those', async () => {
    await seed();
    const r = await pruneBridgeDb(t.db, { policy: POLICY, exportDir: exportDir(), now });
    expect(r.audit).toBe(2);
    expect(r.auditExport).not.toBeNull();
    const file = r.auditExport!;
    expect(path.dirname(file)).toBe(exportDir());
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    const lines = fs
      .readFileSync(file, 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines).toEqual([
      {
        id: expect.any(Number),
        at: '2025-01-01T00:00:00.000Z',
        actor: 'telegram:42',
        action: 'approve',
        target: 'run x',
        chatRef: 'telegram:1',
        outcome: 'allowed',
        detail: null,
      },
      {
        id: expect.any(Number),
        at: '2025-01-01T00:00:01.000Z',
        actor: 'cli:bob',
        action: 'allow',
        target: null,
        chatRef: null,
        outcome: 'refused',
        detail: 'not admin',
      },
    ]);
    const left = await t.repos.audit.listRecent({ limit: 10 });
    expect(left.map((e) => e.actor)).toEqual(['cli:alice']);
    // Nothing old is left: a second prune exports nothing.
    const again = await pruneBridgeDb(t.db, { policy: POLICY, exportDir: exportDir(), now });
    expect(again).toMatchObject({ audit: 0, auditExport: null });
    expect(fs.readdirSync(exportDir())).toEqual([path.basename(file)]);
  });

  it('a failure between export and delete loses nothing and exports nothing twice', async () => {
    await seed();
    t.db.sqlite.exec(
      "CREATE TRIGGER audit_keep BEFORE DELETE ON audit BEGIN SELECT RAISE(ABORT, 'disk gone'); END",
    );
    await expect(
      pruneBridgeDb(t.db, { policy: POLICY, exportDir: exportDir(), now }),
    ).rejects.toThrow(/disk gone/);
    expect(await t.repos.audit.listRecent({ limit: 10 })).toHaveLength(3);
    t.db.sqlite.exec('DROP TRIGGER audit_keep');
    await t.repos.audit.record({
      at: old + 2000,
      actor: 'cli:carol',
      action: 'unbind',
      outcome: 'allowed',
    });

    const r = await pruneBridgeDb(t.db, { policy: POLICY, exportDir: exportDir(), now });
    expect(r.audit).toBe(3);
    // One export file (the first attempt's, rewritten), each old row in it once.
    expect(fs.readdirSync(exportDir())).toEqual([path.basename(r.auditExport!)]);
    const actors = fs
      .readFileSync(r.auditExport!, 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l).actor);
    expect(actors).toEqual(['telegram:42', 'cli:bob', 'cli:carol']);
  });

  it('a dry run counts and changes nothing', async () => {
    await seed();
    const r = await pruneBridgeDb(t.db, {
      policy: POLICY,
      exportDir: exportDir(),
      now,
      dryRun: true,
    });
    expect(r).toMatchObject({ audit: 2, auditExport: null });
    expect(fs.existsSync(exportDir())).toBe(false);
    expect(await t.repos.audit.listRecent({ limit: 10 })).toHaveLength(3);
  });
});
