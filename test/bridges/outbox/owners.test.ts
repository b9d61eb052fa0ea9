/**
 * Delivery results reach their owner whatever process delivers (issue 39): a send queued by one
 * process and delivered by the next writes its message id to the row that asked for it in the
 * transaction that confirms it; a keyed send (what it is about) is found, not sent again, whether
 * the first is still queued by a dead process or already delivered. Real Telegram adapter against
 * the fake Bot API, a real bridge.db file.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { MessageOwner } from '../../../src/bridges/messages.ts';
import { limitsOf, Outbox, OutboxStore } from '../../../src/bridges/outbox/index.ts';
import { plain } from '../../../src/bridges/render-text.ts';
import { TelegramChannel } from '../../../src/bridges/telegram/index.ts';
import { migrateToLatest, openBridgeDb } from '../../../src/db/connection.ts';
import { FakeTelegram } from '../../fakes/telegram.ts';

const CHAT = { id: -1001, type: 'supergroup' as const, title: 'G' };
const TO = `telegram:${CHAT.id}`;

let dir: string;
let file: string;
let fake: FakeTelegram;
let raw: Database.Database;
const cleanups: (() => Promise<void> | void)[] = [];

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-owners-'));
  file = path.join(dir, 'bridge.db');
  const db = openBridgeDb({ file });
  await migrateToLatest(db);
  await db.close();
  raw = new Database(file);
  const now = Date.now();
  for (const [id, status] of [
    ['r-active', 'awaiting'],
    ['r-done', 'completed'],
  ]) {
    raw
      .prepare(
        `insert into runs (id, workflow_id, workspace, layout, status, created_at, updated_at) values (?, 'wf', '/ws', 'native', ?, ?, ?)`,
      )
      .run(id, status, now, now);
  }
  fake = await FakeTelegram.start();
  fake.addChat(CHAT);
});

afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  raw.close();
  await fake.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** One process's outbox over bridge.db; `confirmed` lists the owners it was told of. */
function processOutbox() {
  const store = OutboxStore.open(file);
  const inner = new TelegramChannel({ token: fake.token, apiRoot: fake.apiRoot, commands: [] });
  const confirmed: MessageOwner[] = [];
  const outbox = new Outbox({
    store,
    inner,
    limits: limitsOf('telegram'),
    onConfirmed: (owner) => confirmed.push(owner),
  });
  cleanups.push(async () => {
    await outbox.stop();
    store.close();
  });
  return { store, outbox, confirmed };
}

function addCopy(runId: string): number {
  const now = Date.now();
  const res = raw
    .prepare(
      `insert into checkpoint_messages (run_id, checkpoint_id, chat_ref, button_token, created_at, updated_at) values (?, 'cp1', ?, ?, ?, ?)`,
    )
    .run(runId, TO, `tok-${now}-${Math.random()}`, now, now);
  return Number(res.lastInsertRowid);
}

const copy = (id: number) =>
  raw
    .prepare('select message_ref, decision_shown from checkpoint_messages where id = ?')
    .get(id) as {
    message_ref: string | null;
    decision_shown: number;
  };
const sent = () => fake.okCalls('sendMessage').map((c) => c.params.text);
const msg = (text: string, extra: object = {}) => ({ text: [plain(text)], ...extra });

describe('owners of outbox rows', () => {
  it('a checkpoint copy queued by a process that stopped gets its message id from the next one', async () => {
    const id = addCopy('r-active');
    const first = processOutbox();
    // Queued, never started: the process goes away with the row pending.
    const queued = first.outbox.enqueue(
      'send',
      TO,
      msg('checkpoint', { owner: { kind: 'checkpoint', id } }),
    );
    await first.outbox.stop();
    await expect(queued).rejects.toThrow(/stays queued/);
    expect(copy(id).message_ref).toBeNull();

    const next = processOutbox();
    next.outbox.start();
    await next.outbox.drained();
    expect(sent()).toEqual(['checkpoint']);
    const row = raw.prepare(`select state, result_ref from outbox`).get() as {
      state: string;
      result_ref: string;
    };
    expect(row.state).toBe('confirmed');
    // The copy holds the very ref the confirmed row holds: written in the same transaction.
    expect(copy(id).message_ref).toBe(row.result_ref);
    expect(next.confirmed).toEqual([{ kind: 'checkpoint', id }]);
  });

  it('a decision edit marks its copy shown; a status send records the status message only for a live run', async () => {
    const id = addCopy('r-active');
    const { outbox } = processOutbox();
    outbox.start();
    const ref = await outbox.enqueue('send', TO, msg('cp', { owner: { kind: 'checkpoint', id } }));
    expect(copy(id)).toEqual({ message_ref: ref, decision_shown: 0 });
    await outbox.enqueue('edit', ref!, msg('decided', { owner: { kind: 'decision', id } }));
    expect(copy(id)).toEqual({ message_ref: ref, decision_shown: 1 });

    const live = await outbox.enqueue(
      'send',
      TO,
      msg('status', { owner: { kind: 'status', runId: 'r-active', chatRef: TO } }),
    );
    const done = await outbox.enqueue(
      'send',
      TO,
      msg('status2', { owner: { kind: 'status', runId: 'r-done', chatRef: TO } }),
    );
    expect(done).not.toBeNull();
    expect(raw.prepare('select run_id, message_ref from status_messages').all()).toEqual([
      { run_id: 'r-active', message_ref: live },
    ]);
    // An owner that cannot take its result never undoes the confirmation.
    expect(
      raw.prepare(`select count(*) as n from outbox where state <> 'confirmed'`).get(),
    ).toEqual({ n: 0 });
  });

  it('a keyed send is found, not sent again: delivered already, or still queued by a dead process', async () => {
    const first = processOutbox();
    first.outbox.start();
    const a = await first.outbox.enqueue('send', TO, msg('answer 1', { key: 'answer:r:plan:1' }));
    const again = await first.outbox.enqueue(
      'send',
      TO,
      msg('answer 1', { key: 'answer:r:plan:1' }),
    );
    expect(again).toBe(a);
    const queued = first.outbox.enqueue('send', TO, msg('answer 2', { key: 'answer:r:plan:2' }));
    await first.outbox.stop();
    await queued.catch(() => undefined);

    // The next process replays the step's end before its outbox starts: joined to the queued row.
    const next = processOutbox();
    const replayed = next.outbox.enqueue('send', TO, msg('answer 2', { key: 'answer:r:plan:2' }));
    next.outbox.start();
    const b = await replayed;
    await next.outbox.drained();
    expect(b).not.toBeNull();
    expect(sent()).toEqual(['answer 1', 'answer 2']);
    // Another chat, or another attempt, is another message.
    const other = await next.outbox.enqueue(
      'send',
      TO,
      msg('answer 3', { key: 'answer:r:plan:3' }),
    );
    expect(other).not.toBe(b);
  });
});
