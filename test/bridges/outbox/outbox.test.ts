/**
 * The outbox with the real Telegram adapter against the fake Bot API and a real bridge.db file:
 * a row is committed (on a connection fsyncing every commit) before the platform sees its call;
 * a process killed between "attempted" and "confirmed" loses nothing and repeats only the call
 * whose answer it never got; waiting edits coalesce; a permanent error marks the row failed and
 * tells the hook once.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  limitsOf,
  Outbox,
  type OutboxFailure,
  OutboxStore,
} from '../../../src/bridges/outbox/index.ts';
import { plain } from '../../../src/bridges/render-text.ts';
import { TelegramChannel } from '../../../src/bridges/telegram/index.ts';
import { migrateToLatest, openBridgeDb } from '../../../src/db/connection.ts';
import { type FakeChat, FakeTelegram } from '../../fakes/telegram.ts';
import { bundled } from '../../support/bundle.ts';

const GROUPS: FakeChat[] = [1, 2, 3].map((i) => ({
  id: -1000 - i,
  type: 'supergroup',
  title: `G${i}`,
}));
const ref = (chat: FakeChat) => `telegram:${chat.id}`;
const text = (t: string) => ({ text: [plain(t)] });

let dir: string;
let file: string;
let fake: FakeTelegram;
const cleanups: (() => Promise<void> | void)[] = [];

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-outbox-'));
  file = path.join(dir, 'bridge.db');
  const db = openBridgeDb({ file });
  await migrateToLatest(db);
  await db.close();
  fake = await FakeTelegram.start({ limits: true });
  for (const g of GROUPS) fake.addChat(g);
});

afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  await fake.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

function openOutbox(onFailure?: (f: OutboxFailure) => void) {
  const store = OutboxStore.open(file);
  const inner = new TelegramChannel({ token: fake.token, apiRoot: fake.apiRoot, commands: [] });
  const outbox = new Outbox({
    store,
    inner,
    limits: limitsOf('telegram'),
    ...(onFailure && { onFailure }),
  });
  cleanups.push(async () => {
    await outbox.stop();
    store.close();
  });
  return { store, outbox };
}

/** What another connection (another process would see the same) finds in the outbox table. */
function rowsSeenFromOutside(): { state: string; payload_json: string }[] {
  const other = new Database(file, { readonly: true });
  try {
    return other.prepare('select state, payload_json from outbox order by id').all() as {
      state: string;
      payload_json: string;
    }[];
  } finally {
    other.close();
  }
}

const texts = (chat: FakeChat) => fake.botMessages(chat.id).map((m) => m.text);

describe('the outbox', () => {
  it('commits the row, fsynced, before the platform sees the call', async () => {
    const { store, outbox } = openOutbox();
    expect(store.synchronous).toBe('full');
    const seen: string[][] = [];
    fake.onArrival = (method) => {
      if (method === 'sendMessage') seen.push(rowsSeenFromOutside().map((r) => r.state));
    };
    outbox.start();
    await outbox.enqueue('send', ref(GROUPS[0]!), text('hello'));
    // When the request arrived, another connection already saw the row, marked attempted.
    expect(seen).toEqual([['attempted']]);
    expect(rowsSeenFromOutside().map((r) => r.state)).toEqual(['confirmed']);
  });

  it('killed between attempted and confirmed: nothing lost, only the unanswered call repeated', async () => {
    const [a, b, c] = GROUPS as [FakeChat, FakeChat, FakeChat];
    fake.holdNext('sendMessage'); // applied by "Telegram", its answer never arrives
    const args = [`${ref(a)}=a1`, `${ref(b)}=b1`, `${ref(c)}=c1`, `${ref(b)}=b2`];
    const child = spawn(
      process.execPath,
      [
        // Bundled once (test/support/bundle.ts): tsx would compile the outbox's graph at the start.
        bundled(path.join(import.meta.dirname, 'outbox-child.ts')),
        file,
        fake.apiRoot,
        fake.token,
        ...args,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const exited = new Promise((resolve) => child.once('exit', resolve));
    cleanups.push(() => {
      child.kill('SIGKILL');
    });
    let out = '';
    await new Promise<void>((resolve) => {
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        // a1 was held; b1 and c1 were answered; b2 waits for b's 1 s pace.
        if (out.includes('confirmed b1') && out.includes('confirmed c1')) resolve();
      });
    });
    expect(fake.okCalls('sendMessage').map((call) => call.params.text)).toEqual(
      expect.arrayContaining(['a1', 'b1', 'c1']),
    );
    child.kill('SIGKILL');
    await exited;
    expect(rowsSeenFromOutside().map((r) => r.state)).toEqual([
      'attempted',
      'confirmed',
      'confirmed',
      'pending',
    ]);

    // The next process delivers what is open: a1 again (Telegram gives no way to tell it arrived)
    // and b2 once; b1 and c1, confirmed, are not sent again.
    const { outbox } = openOutbox();
    outbox.start();
    await outbox.drained();
    expect(texts(a)).toEqual(['a1', 'a1']);
    expect(texts(b)).toEqual(['b1', 'b2']);
    expect(texts(c)).toEqual(['c1']);
    expect(rowsSeenFromOutside().every((r) => r.state === 'confirmed')).toBe(true);
    expect(fake.calls.filter((call) => call.errorCode === 429)).toEqual([]);
  });

  it('edits of one message waiting for the chat’s pace coalesce: one call, the latest text', async () => {
    const { outbox } = openOutbox();
    outbox.start();
    const chat = GROUPS[0]!;
    const msg = (await outbox.enqueue('send', ref(chat), text('v0')))!;
    const edits = [1, 2, 3, 4, 5].map((v) => outbox.enqueue('edit', msg, text(`v${v}`)));
    await Promise.all(edits);
    expect(fake.okCalls('editMessageText').map((c) => c.params.text)).toEqual(['v5']);
    expect(texts(chat)).toEqual(['v5']);
    expect(fake.calls.filter((c) => c.errorCode === 429)).toEqual([]);
  });

  it('a permanent error marks the row failed with its code and tells the hook once', async () => {
    const failures: OutboxFailure[] = [];
    const { store, outbox } = openOutbox((f) => failures.push(f));
    outbox.start();
    // Removed from the group: the fake answers 403 "bot was kicked" from its own state.
    fake.store.access.removeBot(GROUPS[0]!);
    const kicked = outbox.enqueue('send', ref(GROUPS[0]!), text('lost'));
    await expect(kicked).rejects.toMatchObject({ code: 'CHAT_UNREACHABLE', reason: 'bot_kicked' });
    await outbox.enqueue('send', ref(GROUPS[1]!), text('fine'));
    expect(failures).toHaveLength(1);
    expect(failures[0]).toMatchObject({
      kind: 'send',
      target: ref(GROUPS[0]!),
      lane: ref(GROUPS[0]!),
    });
    expect(store.get(failures[0]!.id)).toMatchObject({
      state: 'failed',
      errorCode: 'CHAT_UNREACHABLE',
    });
    expect(texts(GROUPS[1]!)).toEqual(['fine']);
  });

  it('refuses a malformed chat ref before writing anything', async () => {
    const { outbox } = openOutbox();
    expect(() => outbox.enqueue('send', 'telegram:@channel', text('x'))).toThrow(/chat ref/);
    expect(rowsSeenFromOutside()).toEqual([]);
  });
});
