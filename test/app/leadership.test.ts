/**
 * A leader's inbound fence (issue 33): an update is applied only while this process's fencing
 * token is the database's and until it knows it lost its lease; a losing leader lets the updates
 * it is applying settle before it gives its runs up, and leaves every later one to the new leader.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { FencedInbound, type Leadership } from '../../src/app/leadership.ts';
import { isDeclined } from '../../src/bridges/declined.ts';
import type { InboundEvent } from '../../src/bridges/events.ts';
import { type BridgeDb, migrateToLatest, openBridgeDb } from '../../src/db/connection.ts';
import { claimFence, type FencedError } from '../../src/db/leader-fence.ts';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function bridgeDb(): Promise<BridgeDb> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-leadership-'));
  const db = openBridgeDb({ file: path.join(dir, 'bridge.db') });
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  cleanups.push(() => db.close());
  await migrateToLatest(db);
  return db;
}

function leadership(token: number, fenced: FencedError[] = []): Leadership {
  return {
    token,
    holder: `bridge-${token}`,
    leaseAgeSeconds: async () => 0,
    onFenced: (err) => fenced.push(err),
  };
}

const text = (n: number): InboundEvent => ({
  kind: 'text',
  text: `message ${n}`,
  chatRef: 'telegram:1',
  user: { platform: 'telegram', id: '7', display: 'alice' },
  idempotencyKey: `telegram:update:${n}`,
});

/** A promise and its resolve function. */
function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve: () => void = () => {};
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

it('a losing leader waits for the update it is applying, then declines every later one', async () => {
  const db = await bridgeDb();
  await claimFence(db.kysely, 1, 'bridge-1');
  const applied: string[] = [];
  const entered = deferred();
  const release = deferred();
  const inbound = new FencedInbound(
    async (event) => {
      entered.resolve();
      await release.promise;
      applied.push(event.idempotencyKey);
    },
    db.kysely,
    leadership(1),
  );
  const inHand = inbound.handler(text(1));
  await entered.promise;

  let settled: boolean | undefined;
  const stopping = inbound.stopTaking('lease lost', 60_000).then((ok) => {
    settled = ok;
  });
  // Declined at once, not applied: the adapter leaves it unconfirmed for the new leader.
  const later = await inbound.handler(text(2)).catch((err: unknown) => err);
  expect(isDeclined(later)).toBe(true);
  expect(String(later)).toContain('no longer leads (lease lost)');
  expect(settled).toBeUndefined();

  release.resolve();
  await inHand;
  await stopping;
  expect(settled).toBe(true);
  expect(applied).toEqual(['telegram:update:1']);
});

it('gives up waiting after its bound when an update in hand never settles', async () => {
  const db = await bridgeDb();
  await claimFence(db.kysely, 1, 'bridge-1');
  const entered = deferred();
  const inbound = new FencedInbound(
    () => {
      entered.resolve();
      return new Promise<void>(() => {});
    },
    db.kysely,
    leadership(1),
  );
  void inbound.handler(text(1));
  await entered.promise;
  expect(await inbound.stopTaking('lease lost', 50)).toBe(false);
});

it('declines an update once a newer leader claimed the fence, and says it was fenced', async () => {
  const db = await bridgeDb();
  await claimFence(db.kysely, 1, 'bridge-1');
  await claimFence(db.kysely, 2, 'bridge-2');
  const fenced: FencedError[] = [];
  const applied: string[] = [];
  const inbound = new FencedInbound(
    async (event) => {
      applied.push(event.idempotencyKey);
    },
    db.kysely,
    leadership(1, fenced),
  );
  const err = await inbound.handler(text(1)).catch((e: unknown) => e);
  expect(isDeclined(err)).toBe(true);
  expect(fenced.map((f) => f.current)).toEqual([2]);
  expect(applied).toEqual([]);
  // With nothing in hand, a stop of taking resolves at once.
  expect(await inbound.stopTaking('fenced', 60_000)).toBe(true);
});
