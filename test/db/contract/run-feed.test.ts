/**
 * The change feed's store on both dialects: changes of other processes are listed after a row
 * id (never this process's own), the data version moves when one is recorded, runs past their
 * cursor are pending, a cursor only moves forward unless reset, and prune drops what was shown.
 */
import { describe, expect, it } from 'vitest';
import type { AnyBridgeDb } from '../../../src/db/migrator.ts';
import { type RunFeedStore, runFeedStoreOf } from '../../../src/db/repositories/run-feed.ts';
import { DIALECT_NAMES, useContractDb } from './dialects.ts';

/**
 * Another process's commits, as its own store would write them (pid 0 is never ours), on its own
 * connection: SQLite's data version moves only for other connections' commits.
 */
async function foreign(db: AnyBridgeDb, rows: [string, number][]) {
  await db.kysely
    .insertInto('run_changes')
    .values(rows.map(([run_id, seq]) => ({ run_id, seq, pid: 0, at: 1_000_000 })))
    .execute();
}

describe.each(DIALECT_NAMES)('the change feed store on %s', (dialect) => {
  const t = useContractDb(dialect);
  if (t === undefined) return;
  const store = (): Promise<RunFeedStore> => {
    const { db, clock } = t();
    return runFeedStoreOf(db, () => clock.now);
  };

  it('lists other processes’ changes after an id, never its own, and its version moves', async () => {
    const feed = await store();
    expect(await feed.latestId()).toBe(0);
    const idle = await feed.dataVersion();
    await feed.record([{ runId: 'own', seq: 1 }]);
    await foreign(await t().reopen(), [
      ['r1', 1],
      ['r2', 4],
      ['r1', 2],
    ]);
    expect(await feed.dataVersion()).not.toBe(idle);
    const all = await feed.changesAfter(0);
    expect(all.map((c) => [c.runId, c.seq])).toEqual([
      ['r1', 1],
      ['r2', 4],
      ['r1', 2],
    ]);
    const latest = await feed.latestId();
    expect(latest).toBe(all.at(-1)!.id);
    expect((await feed.changesAfter(all[0]!.id)).map((c) => c.seq)).toEqual([4, 2]);
    expect(await feed.changesAfter(latest)).toEqual([]);
  });

  it('tells which runs are past their cursor; a cursor moves forward unless reset', async () => {
    const feed = await store();
    await foreign(t().db, [
      ['r1', 3],
      ['r1', 5],
      ['r2', 2],
    ]);
    const byRun = async () =>
      Object.fromEntries((await feed.pending()).map((p) => [p.runId, [p.firstSeq, p.cursor]]));
    expect(await byRun()).toEqual({ r1: [3, null], r2: [2, null] });
    await feed.setCursor('r1', 4);
    expect(await byRun()).toEqual({ r1: [5, 4], r2: [2, null] });
    await feed.setCursor('r1', 2); // never back
    expect(await feed.cursor('r1')).toBe(4);
    await feed.setCursor('r2', 2);
    await feed.setCursor('r1', 5);
    expect(await feed.pending()).toEqual([]);
    await feed.resetCursor('r1', 1); // a repair cut the ledger back
    expect(await feed.cursor('r1')).toBe(1);
    expect(await feed.cursor('nope')).toBeNull();
  });

  it('prune drops the changes shown and keeps those not yet shown', async () => {
    const feed = await store();
    await foreign(t().db, [
      ['r1', 1],
      ['r1', 2],
      ['r2', 1],
    ]);
    await feed.setCursor('r1', 1);
    await feed.prune();
    expect((await feed.changesAfter(0)).map((c) => [c.runId, c.seq])).toEqual([
      ['r1', 2],
      ['r2', 1],
    ]);
  });
});
