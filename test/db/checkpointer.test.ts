/**
 * bridge.db's WAL checkpoints on their own thread: commits on the main connection never copy
 * the WAL into the database file (that is the thread's work, and a last checkpoint on close);
 * when the thread cannot start, SQLite's automatic checkpoint stays on and it is logged.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startBackgroundCheckpoints } from '../../src/db/checkpointer.ts';
import { memoryLog } from '../bridges/web/support.ts';
import { slow } from '../support/slowdown.ts';
import { openTestDb, type TestDb } from './helpers.ts';

let t: TestDb | undefined;
afterEach(async () => {
  await t?.cleanup();
  t = undefined;
});

/** Commits `mb` MiB in 256 KiB rows, one transaction each (~64 pages apiece, 4 commits per MiB). */
function writeMiB(d: TestDb, mb: number): void {
  d.db.sqlite.exec('create table if not exists blobs (b blob)');
  const insert = d.db.sqlite.prepare('insert into blobs (b) values (?)');
  for (let i = 0; i < mb * 4; i++) insert.run(Buffer.alloc(256 * 1024, i % 251));
}

const size = (file: string) => fs.statSync(file).size;
const wal = (file: string) => `${file}-wal`;

async function until(cond: () => boolean, what: string, ms = 10_000): Promise<void> {
  const end = Date.now() + slow(ms);
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('startBackgroundCheckpoints', () => {
  it('keeps checkpoints off the main connection; the thread and the close copy the WAL', async () => {
    t = await openTestDb();
    const log = memoryLog();
    const checkpoints = await startBackgroundCheckpoints(t.db, log, { intervalMs: 3_600_000 });
    expect(checkpoints.inBackground).toBe(true);
    const before = size(t.file);
    // 8 MiB is 2,000 pages: twice the point where SQLite's own checkpoint would run in a commit.
    writeMiB(t, 8);
    expect(size(wal(t.file))).toBeGreaterThan(8 * 1024 * 1024);
    expect(size(t.file)).toBe(before);
    // The close runs the thread's last checkpoint: the pages are in the database file.
    await checkpoints.close();
    expect(size(t.file)).toBeGreaterThan(8 * 1024 * 1024);
    expect(t.db.sqlite.pragma('wal_autocheckpoint', { simple: true })).toBe(1000);
  });

  it('checkpoints every interval while commits go on', async () => {
    t = await openTestDb();
    const d = t;
    const log = memoryLog();
    const checkpoints = await startBackgroundCheckpoints(d.db, log, { intervalMs: 50 });
    const before = size(d.file);
    writeMiB(d, 2);
    await until(() => size(d.file) > before + 2 * 1024 * 1024, 'the thread’s checkpoint');
    expect(d.db.sqlite.prepare('select count(*) as n from blobs').get()).toEqual({ n: 8 });
    await checkpoints.close();
  });

  it('leaves SQLite’s automatic checkpoint on, and says so, when the thread cannot start', async () => {
    t = await openTestDb();
    const log = memoryLog();
    const missing = path.join(t.dir, 'no-such-module.js');
    const checkpoints = await startBackgroundCheckpoints(t.db, log, { library: missing });
    expect(checkpoints.inBackground).toBe(false);
    expect(log.lines).toContainEqual(
      expect.objectContaining({
        level: 'warn',
        msg: 'bridge.db: the checkpoint thread did not start',
      }),
    );
    const before = size(t.file);
    writeMiB(t, 8);
    // SQLite's own checkpoint ran inside a commit.
    expect(size(t.file)).toBeGreaterThan(before + 4 * 1024 * 1024);
    await checkpoints.close();
  });
});
