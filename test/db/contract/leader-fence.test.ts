/**
 * The leader lease's fencing token in bridge.db (issue 33), on a real postgres: a new leader's
 * token only ever goes up, and the outbox of an old leader (a process paused past its lease that
 * wakes after a takeover) writes nothing: no new row, no claim, no confirmation.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { outboxStoreOf } from '../../../src/bridges/outbox/store-of.ts';
import type { NewOutboxRow, OutboxStorePort } from '../../../src/bridges/outbox/store-port.ts';
import { plain } from '../../../src/bridges/render-text.ts';
import { claimFence, currentFence, FencedError } from '../../../src/db/leader-fence.ts';
import { type DialectTestDb, testDbOn } from './dialects.ts';

const CHAT = 'telegram:-1001';
const send = (t: string): NewOutboxRow => ({
  platform: 'telegram',
  lane: CHAT,
  kind: 'send',
  target: CHAT,
  message: { text: [plain(t)] },
  urgency: 'notice',
});

describe('the leader fence on postgres', () => {
  const open = testDbOn('postgres');
  if (open === undefined) return;
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });
  const fresh = async (): Promise<DialectTestDb> => {
    const t = await open();
    cleanups.push(() => t.cleanup());
    return t;
  };
  const storeWith = async (t: DialectTestDb, token: number): Promise<OutboxStorePort> => {
    const s = await outboxStoreOf(t.db, Date.now, undefined, token);
    cleanups.push(() => s.close());
    return s;
  };

  it('only ever raises the token: a stale claim is refused', async () => {
    const t = await fresh();
    expect(await currentFence(t.db.kysely)).toBeUndefined();
    expect(await claimFence(t.db.kysely, 3, 'a')).toBe(true);
    expect(await claimFence(t.db.kysely, 2, 'b')).toBe(false);
    expect(await claimFence(t.db.kysely, 3, 'b')).toBe(false);
    expect(await currentFence(t.db.kysely)).toBe(3);
    expect(await claimFence(t.db.kysely, 4, 'b')).toBe(true);
    expect(await currentFence(t.db.kysely)).toBe(4);
  });

  it("an old leader's outbox writes nothing once a newer leader claimed", async () => {
    const t = await fresh();
    await claimFence(t.db.kysely, 1, 'old');
    const old = await storeWith(t, 1);
    const [queued] = (await old.writeBatch([send('before the takeover')], [])).ids as [number];
    await old.attempted(queued);

    await claimFence(t.db.kysely, 2, 'new');
    const fresher = await storeWith(t, 2);

    // The old one wakes: a new row, a confirmation, a retry: each refused, nothing changed.
    await expect(old.writeBatch([send('after the takeover')], [])).rejects.toThrow(FencedError);
    await expect(old.confirmed(queued, 'telegram:-1001/7')).rejects.toThrow(FencedError);
    await expect(old.retryAt(queued, 5)).rejects.toThrow(FencedError);
    await expect(old.failed(queued, 'X', 'x')).rejects.toThrow(FencedError);
    const rows = await fresher.open('telegram');
    expect(rows.map((r) => [r.id, r.state])).toEqual([[queued, 'attempted']]);

    // The new leader owns the row: its confirmation lands.
    await fresher.confirmed(queued, 'telegram:-1001/7');
    expect((await fresher.get(queued))?.state).toBe('confirmed');
    expect(await fresher.open('telegram')).toEqual([]);
  });
});
