import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { NotFoundError } from '../../../src/errors.ts';
import { DIALECT_NAMES, type DialectTestDb, testDbOn } from '../contract/dialects.ts';

const RUN = {
  id: '2026-11-29T143000Z-add-login',
  workflowId: 'pabcd',
  workspace: '/srv/app',
  layout: 'native',
  status: 'active' as const,
  startedBy: 'telegram:42',
  originChat: 'telegram:-100123',
};

describe.each(DIALECT_NAMES)('RunsRepo on %s', (dialect) => {
  const open = testDbOn(dialect);
  if (open === undefined) return;
  let t: DialectTestDb;
  beforeEach(async () => {
    t = await open();
  });
  afterEach(() => t.cleanup());

  it('indexes a run and reads it back', async () => {
    const row = await t.repos.runs.upsert(RUN);
    expect(row).toEqual({
      ...RUN,
      createdAt: 1_000_000,
      updatedAt: 1_000_000,
      finishedAt: null,
      spec: null,
    });
    expect(await t.repos.runs.get(RUN.id)).toEqual(row);
    expect(await t.repos.runs.get('nope')).toBeNull();
  });

  it('a second upsert refreshes the row and keeps createdAt', async () => {
    await t.repos.runs.upsert(RUN);
    t.clock.now = 2_000_000;
    const row = await t.repos.runs.upsert({ ...RUN, status: 'awaiting', createdAt: 5 });
    expect(row).toMatchObject({ status: 'awaiting', createdAt: 1_000_000, updatedAt: 2_000_000 });
    expect(await t.repos.runs.list()).toHaveLength(1);
  });

  it('sets finishedAt once when a run ends', async () => {
    await t.repos.runs.upsert(RUN);
    t.clock.now = 2_000_000;
    expect((await t.repos.runs.updateStatus(RUN.id, 'blocked')).finishedAt).toBeNull();
    const done = await t.repos.runs.updateStatus(RUN.id, 'completed', 3_000_000);
    expect(done).toMatchObject({
      status: 'completed',
      updatedAt: 3_000_000,
      finishedAt: 3_000_000,
    });
    // Re-indexing an ended run (start-up rescan) keeps the first finish time.
    const again = await t.repos.runs.upsert({ ...RUN, status: 'completed', updatedAt: 4_000_000 });
    expect(again.finishedAt).toBe(3_000_000);
    await expect(t.repos.runs.updateStatus('nope', 'failed')).rejects.toBeInstanceOf(NotFoundError);
  });

  it('lists by status, workspace and origin chat, newest first', async () => {
    const ids = ['2026-01-01T000000Z-a', '2026-01-01T000000Z-b', '2026-01-01T000000Z-c'];
    for (const [i, id] of ids.entries()) {
      t.clock.now = 1_000_000 + i;
      await t.repos.runs.upsert({ ...RUN, id, workspace: i === 2 ? '/other' : '/srv/app' });
    }
    await t.repos.runs.updateStatus(ids[0]!, 'failed', 1_000_010);

    expect((await t.repos.runs.list()).map((r) => r.id)).toEqual([ids[0], ids[2], ids[1]]);
    expect((await t.repos.runs.list({ status: 'active' })).map((r) => r.id)).toEqual([
      ids[2],
      ids[1],
    ]);
    expect((await t.repos.runs.list({ status: ['failed', 'active'], limit: 2 })).length).toBe(2);
    expect((await t.repos.runs.list({ workspace: '/other' })).map((r) => r.id)).toEqual([ids[2]]);
    expect(await t.repos.runs.list({ originChat: 'slack:x' })).toEqual([]);
    expect(await t.repos.runs.list({ status: [] })).toEqual([]);
  });
});
