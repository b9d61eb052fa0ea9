/**
 * The call a person waits for (issue 31): an `interactive` call may use the chat's short burst
 * instead of waiting out its one-per-second window; waiting status edits coalesce behind it; a
 * 429 takes the chat's burst away for a minute. Timing rules on a simulated clock (the real
 * Outbox and its SQLite rows); then the real Telegram adapter against the fake Bot API, which
 * allows the same burst Telegram's table assumes, and a bridge.db file.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { OutgoingMessage, Urgency } from '../../../src/bridges/messages.ts';
import {
  limitsOf,
  Outbox,
  OutboxStore,
  TELEGRAM_LIMITS,
} from '../../../src/bridges/outbox/index.ts';
import { BURST_COOLDOWN_MS } from '../../../src/bridges/outbox/pacer.ts';
import { plain } from '../../../src/bridges/render-text.ts';
import { TelegramChannel } from '../../../src/bridges/telegram/index.ts';
import { type BridgeDb, migrateToLatest, openBridgeDb } from '../../../src/db/connection.ts';
import { RateLimitedError } from '../../../src/errors.ts';
import { FakeTelegram } from '../../fakes/telegram.ts';
import type { FakeTelegramLimits } from '../../fakes/telegram-limits.ts';
import { SimClock, SimPlatform, simOutbox } from './sim.ts';

const PRIVATE = 'telegram:501';
const say = (label: string, urgency: Urgency): OutgoingMessage => ({
  text: [plain(label)],
  urgency,
});

/** A simulated platform whose next `n` edits are answered 429 (retry after `retryMs`). */
class LimitedPlatform extends SimPlatform {
  refuseEdits = 0;
  retryMs = 500;
  override async edit(messageRef: string, message: OutgoingMessage): Promise<void> {
    if (this.refuseEdits > 0) {
      this.refuseEdits--;
      throw new RateLimitedError('telegram', this.retryMs);
    }
    await super.edit(messageRef, message);
  }
}

const open: BridgeDb[] = [];
afterEach(async () => {
  for (const db of open.splice(0)) await db.close();
});

/** A real Outbox over a fresh bridge.db and Telegram's table, on a simulated clock. */
async function telegramOutbox() {
  const clock = new SimClock();
  const platform = new LimitedPlatform('telegram', clock, () => 20);
  const { outbox } = await simOutbox(platform, clock, TELEGRAM_LIMITS, open);
  const startOf = (label: string) => platform.calls.find((c) => c.text === label)?.startedAt;
  return { clock, platform, outbox, startOf };
}

describe('interactive calls on a simulated clock (Telegram’s table)', () => {
  it('a press 300 ms after the checkpoint message: its edit starts at once, a decision edit waits out the second', async () => {
    for (const [urgency, expected] of [
      ['interactive', 320],
      ['decision', 1020],
    ] as const) {
      const { clock, outbox, startOf } = await telegramOutbox();
      const cp = outbox.enqueue('send', PRIVATE, say('checkpoint', 'decision'));
      await clock.runUntil(320);
      void outbox.enqueue('edit', (await cp)!, say('approved', urgency));
      await clock.runAll();
      // The checkpoint's call was answered at 20: the chat's window holds others until 1020.
      expect(startOf('approved'), urgency).toBe(expected);
    }
  });

  it('a press’s edit starts before work queued earlier in its turn (the next agent’s spawn); a status edit after it', async () => {
    for (const [urgency, callsBefore] of [
      ['interactive', 1],
      ['status', 0],
    ] as const) {
      const { clock, outbox, platform } = await telegramOutbox();
      // Queued first in the same turn, as the worker's claim of the approved run's next job is:
      // its spawn forks synchronously, and the person waits for the edit, not for the fork.
      const other = new Promise<number>((r) => setImmediate(() => r(platform.calls.length)));
      const edit = outbox.enqueue('edit', `${PRIVATE}/7`, say('approved', urgency));
      expect(await other, urgency).toBe(callsBefore);
      await clock.runAll();
      await edit;
    }
  });

  it('three interactive calls at once, then one a second: the chat’s bucket refills at its rate', async () => {
    const { clock, outbox, platform } = await telegramOutbox();
    for (const i of [1, 2, 3, 4, 5])
      void outbox.enqueue('send', PRIVATE, say(`r${i}`, 'interactive'));
    await clock.runAll();
    // One call at a time per chat (20 ms each); the fourth waits for a token (1 per second).
    expect(platform.calls.map((c) => c.startedAt)).toEqual([0, 20, 40, 1020, 2020]);
  });

  it('status edits waiting for the chat coalesce behind the press’s edit, which goes first', async () => {
    const { clock, outbox, platform } = await telegramOutbox();
    const status = outbox.enqueue('send', PRIVATE, say('status', 'notice'));
    const cp = outbox.enqueue('send', PRIVATE, say('checkpoint', 'decision'));
    await clock.runUntil(1100);
    const [statusRef, cpRef] = [(await status)!, (await cp)!];
    for (const s of ['s1', 's2', 's3']) void outbox.enqueue('edit', statusRef, say(s, 'status'));
    void outbox.enqueue('edit', cpRef, say('approved', 'interactive'));
    await clock.runAll();
    expect(platform.calls.map((c) => [c.text, c.startedAt])).toEqual([
      ['status', 0],
      ['checkpoint', 1020],
      ['approved', 1100],
      // One call for the three waiting edits, the latest, a second after the press's edit.
      ['s3', 2120],
    ]);
  });

  it('a fan-out filling the bot’s 30 a second at once: a press beside it takes the next free slot, first', async () => {
    for (const urgency of ['interactive', 'decision'] as const) {
      const { clock, outbox, platform, startOf } = await telegramOutbox();
      for (let i = 0; i < 40; i++)
        void outbox.enqueue('send', `telegram:-100${i}`, say(`g${i}`, 'notice'));
      await clock.runUntil(5);
      void outbox.enqueue('send', PRIVATE, say('press answer', urgency));
      await clock.runAll();
      // All 30 of the fan-out's first sends started at 0 and were answered at 20: no slot is
      // held (issue 31), so the press waits for the next one, at 1020, and goes before g30.
      expect(startOf('g29'), urgency).toBe(0);
      expect(startOf('press answer'), urgency).toBe(1020);
      const order = platform.calls.map((c) => c.text);
      expect(order.indexOf('press answer'), urgency).toBeLessThan(order.indexOf('g30'));
    }
  });

  it('after a 429 the chat’s interactive calls keep its pace for a minute, then burst again', async () => {
    const { clock, outbox, platform, startOf } = await telegramOutbox();
    const cp = outbox.enqueue('send', PRIVATE, say('checkpoint', 'decision'));
    await clock.runUntil(100);
    const cpRef = (await cp)!;
    platform.refuseEdits = 1;
    void outbox.enqueue('edit', cpRef, say('first press', 'interactive'));
    await clock.runUntil(1200);
    void outbox.enqueue('edit', cpRef, say('second press', 'interactive'));
    await clock.runUntil(BURST_COOLDOWN_MS + 1000);
    void outbox.enqueue('send', PRIVATE, say('reply', 'interactive'));
    void outbox.enqueue('edit', cpRef, say('third press', 'interactive'));
    await clock.runAll();
    // Refused at 100 (it counts); retried once the chat's second is over, without the burst.
    expect(startOf('first press')).toBe(1100);
    expect(startOf('second press')).toBe(2120);
    // A minute later the burst is back: the edit follows the reply without waiting.
    expect(startOf('third press')! - startOf('reply')!).toBe(20);
  });
});

describe('interactive calls through the Telegram adapter and the fake Bot API', () => {
  let dir: string;
  let fake: FakeTelegram | undefined;
  const stops: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const stop of stops.splice(0).reverse()) await stop();
    await fake?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  async function start(limits: FakeTelegramLimits | true) {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-interactive-'));
    const file = path.join(dir, 'bridge.db');
    const db = openBridgeDb({ file });
    await migrateToLatest(db);
    await db.close();
    fake = await FakeTelegram.start({ limits });
    fake.addChat({ id: 501, type: 'private' });
    const store = OutboxStore.open(file);
    let outbox: Outbox | undefined;
    const inner = new TelegramChannel({
      token: fake.token,
      apiRoot: fake.apiRoot,
      commands: [],
      // As startBridge wires it: a 429 the adapter waits out itself reaches the outbox.
      onApiCall: (outcome) => {
        if (outcome === 'rate_limited') outbox?.rateLimitSeen();
      },
    });
    outbox = new Outbox({ store, inner, limits: limitsOf('telegram') });
    outbox.start();
    stops.push(async () => {
      await outbox.stop();
      store.close();
    });
    return { fake, outbox };
  }

  it('the checkpoint message, the press’s edit and the reply in the chat’s burst: no 429, the edit before the status edit', async () => {
    const { fake, outbox } = await start(true);
    const status = (await outbox.enqueue('send', PRIVATE, say('status', 'notice')))!;
    const cp = (await outbox.enqueue('send', PRIVATE, say('checkpoint', 'decision')))!;
    await Promise.all([
      outbox.enqueue('edit', status, say('status: decided', 'status')),
      outbox.enqueue('edit', cp, say('checkpoint: approved', 'interactive')),
      outbox.enqueue('send', PRIVATE, say('Approved.', 'interactive')),
    ]);
    expect(fake.calls.filter((c) => c.errorCode === 429)).toEqual([]);
    expect(fake.calls.filter((c) => c.ok).map((c) => c.params.text)).toEqual([
      'status',
      'checkpoint',
      'checkpoint: approved',
      'Approved.',
      'status: decided',
    ]);
  });

  it('a platform stricter than the table: one 429, then the chat’s interactive calls keep its pace', async () => {
    // No burst at all: the first interactive call over the 1/s is refused.
    const { fake, outbox } = await start({
      perChat: { max: 1, windowMs: 1000 },
      perGroup: { max: 20, windowMs: 60_000 },
      overall: { max: 30, windowMs: 1000 },
    });
    const cp = (await outbox.enqueue('send', PRIVATE, say('checkpoint', 'decision')))!;
    // The adapter waits out retry_after and delivers it; the outbox learns of the 429.
    await outbox.enqueue('edit', cp, say('first press', 'interactive'));
    await outbox.enqueue('edit', cp, say('second press', 'interactive'));
    await outbox.enqueue('send', PRIVATE, say('Approved.', 'interactive'));
    const refused = fake.calls.filter((c) => c.errorCode === 429);
    expect(refused.map((c) => c.params.text)).toEqual(['first press']);
    // Without the burst, each call waited for the chat's second after the one before.
    const ok = fake.calls.filter((c) => c.ok);
    expect(ok.map((c) => c.params.text)).toEqual([
      'checkpoint',
      'first press',
      'second press',
      'Approved.',
    ]);
    for (let i = 2; i < ok.length; i++) {
      expect(ok[i]!.at! - ok[i - 1]!.at!, String(ok[i]!.params.text)).toBeGreaterThanOrEqual(1000);
    }
  });
});
