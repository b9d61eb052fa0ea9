/**
 * A decided checkpoint's buttons go before a chat's backlog (issue 39): the edit (or re-post)
 * that shows a closed checkpoint's decision (owner `decision`, as chatops queues it) is the first
 * call of its chat the limits allow, ahead of older interactive and routine sends, and waiting
 * edits of one message that a restart left behind go out as one call with the latest text. The
 * real Telegram adapter (grammY) against the fake Bot API enforcing Telegram's limits, a
 * bridge.db file.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { MessageOwner, OutgoingMessage, Urgency } from '../../../src/bridges/messages.ts';
import { limitsOf, Outbox, OutboxStore } from '../../../src/bridges/outbox/index.ts';
import { plain } from '../../../src/bridges/render-text.ts';
import { TelegramChannel } from '../../../src/bridges/telegram/index.ts';
import { migrateToLatest, openBridgeDb } from '../../../src/db/connection.ts';
import { FakeTelegram } from '../../fakes/telegram.ts';

const GROUP = -1001501;
const CHAT = `telegram:${GROUP}`;
const say = (label: string, urgency: Urgency, owner?: MessageOwner): OutgoingMessage => ({
  text: [plain(label)],
  urgency,
  ...(owner && { owner }),
});
const DECISION: MessageOwner = { kind: 'decision', id: 1 };

let dir: string;
let fake: FakeTelegram | undefined;
const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const stop of stops.splice(0).reverse()) await stop();
  await fake?.close();
  fake = undefined;
  fs.rmSync(dir, { recursive: true, force: true });
});

/** bridge.db and the fake Bot API (Telegram's limits), shared by the outboxes `open` makes. */
async function world() {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-closing-'));
  const file = path.join(dir, 'bridge.db');
  const db = openBridgeDb({ file });
  await migrateToLatest(db);
  await db.close();
  fake = await FakeTelegram.start({ limits: true });
  fake.addChat({ id: GROUP, type: 'supergroup', title: 'team' });
  const f = fake;
  /** A real outbox over the real adapter; `start: false` leaves it queueing only. */
  const open = (start = true) => {
    const store = OutboxStore.open(file);
    const inner = new TelegramChannel({ token: f.token, apiRoot: f.apiRoot, commands: [] });
    const outbox = new Outbox({ store, inner, limits: limitsOf('telegram') });
    if (start) outbox.start();
    const stop = async () => {
      await outbox.stop();
      store.close();
    };
    stops.push(stop);
    return { outbox, store, stop };
  };
  return { fake: f, file, open };
}

/** The texts the fake applied, in order (sends and edits). */
const delivered = (f: FakeTelegram): string[] =>
  f.calls.filter((c) => c.ok && c.method !== 'getMe').map((c) => String(c.params.text));

describe('the decision of a checkpoint goes before the chat’s backlog', () => {
  it('an edit showing the decision passes older interactive sends; no 429', async () => {
    const { fake, open } = await world();
    const { outbox } = open();
    const cp = (await outbox.enqueue('send', CHAT, say('checkpoint', 'interactive')))!;
    // A backlog: the run goes on while the chat's one-a-second holds its messages back (in the
    // chat of `/run` its answers are interactive: the person who started it waits).
    const backlog = [1, 2, 3, 4, 5].map((i) =>
      outbox.enqueue('send', CHAT, say(`answer ${i}`, i < 5 ? 'interactive' : 'notice')),
    );
    await fake.waitForCalls('sendMessage', 2); // the backlog's first call has gone out
    // Decided after a restart (decision-display.ts: not a person's press, urgency `decision`).
    const shown = outbox.enqueue('edit', cp, say('checkpoint: approved', 'decision', DECISION));
    await Promise.all([shown, ...backlog]);
    const order = delivered(fake);
    expect(fake.calls.filter((c) => c.errorCode === 429)).toEqual([]);
    // At most the backlog call in flight when it was queued went before it.
    expect(order.slice(0, 3)).toEqual(['checkpoint', 'answer 1', 'checkpoint: approved']);
    expect(order.slice(3)).toEqual(['answer 2', 'answer 3', 'answer 4', 'answer 5']);
  });

  it('a re-posted decision (a send) passes the chat’s earlier sends, which keep their order', async () => {
    const { fake, open } = await world();
    const { outbox } = open();
    await outbox.enqueue('send', CHAT, say('status', 'interactive'));
    const backlog = [1, 2, 3, 4].map((i) =>
      outbox.enqueue('send', CHAT, say(`notice ${i}`, 'interactive')),
    );
    await fake.waitForCalls('sendMessage', 2);
    const repost = outbox.enqueue('send', CHAT, {
      ...say('decided: approved', 'decision', DECISION),
      key: 'decision:1',
    });
    await Promise.all([repost, ...backlog]);
    expect(delivered(fake)).toEqual([
      'status',
      'notice 1',
      'decided: approved',
      'notice 2',
      'notice 3',
      'notice 4',
    ]);
  });

  it('edits of one message left waiting by a restart go out once, the latest, first if one shows a decision', async () => {
    const { fake, file, open } = await world();
    const first = open();
    const status = (await first.outbox.enqueue('send', CHAT, say('status', 'notice')))!;
    const cp = (await first.outbox.enqueue('send', CHAT, say('checkpoint', 'interactive')))!;
    await first.stop();
    // The previous process queued these and died before sending any (never started here).
    const dead = open(false);
    const waiting = [
      dead.outbox.enqueue('edit', status, say('status: step 1', 'status')),
      dead.outbox.enqueue('send', CHAT, say('answer', 'interactive')),
      dead.outbox.enqueue('edit', status, say('status: step 2', 'status')),
      dead.outbox.enqueue('edit', cp, say('checkpoint: 1 vote', 'decision')),
      dead.outbox.enqueue('edit', status, say('status: step 3', 'status')),
      dead.outbox.enqueue('edit', cp, say('checkpoint: approved', 'decision', DECISION)),
    ];
    await dead.stop(); // the rows are committed; their callers are told they stay queued
    await Promise.allSettled(waiting);
    const before = fake.calls.length;
    const next = open();
    await next.outbox.drained();
    const order = fake.calls
      .slice(before)
      .filter((c) => c.ok)
      .map((c) => String(c.params.text));
    // Six rows, three calls: the decision first, the latest status text once.
    expect(order).toEqual(['checkpoint: approved', 'answer', 'status: step 3']);
    const ro = OutboxStore.open(file);
    try {
      expect(ro.open('telegram')).toEqual([]);
    } finally {
      ro.close();
    }
  });
});
