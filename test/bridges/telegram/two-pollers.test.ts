/**
 * Two processes polling one bot token, from the fake's own state (no injected error): the second
 * poller's getUpdates ends the first one's held poll with 409, as Telegram does. The first
 * adapter reports a fault (shown in /readyz) and stops polling instead of fighting; the second
 * keeps receiving. A leader under a lease (`pollConflictRetryMs`) is different: the other poller
 * is a former leader polling once more before it learns it does not lead, so it polls on.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Command } from '../../../src/bridges/events.ts';
import type { TelegramChannel } from '../../../src/bridges/telegram/index.ts';
import { slow } from '../../support/slowdown.ts';
import { ALICE, ALICE_DM, channelFor, FakeTelegram, Inbox, recordingLogger } from './support.ts';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function poller(
  fake: FakeTelegram,
  pollConflictRetryMs?: number,
): Promise<{ channel: TelegramChannel; inbox: Inbox }> {
  const inbox = new Inbox();
  const channel = channelFor(fake, {
    logger: recordingLogger(),
    ...(pollConflictRetryMs !== undefined && { pollConflictRetryMs }),
  });
  await channel.start(async (event) => inbox.push(event));
  cleanups.push(() => channel.stop());
  return { channel, inbox };
}

describe('two pollers on one token', () => {
  it('the first gets 409, reports a fault and stops; the second keeps receiving', async () => {
    const fake = await FakeTelegram.start();
    cleanups.push(() => fake.close());
    fake.addChat(ALICE_DM);
    const first = await poller(fake);
    await new Promise<void>((resolve) => {
      const held = () => (fake.waitingPolls > 0 ? resolve() : setTimeout(held, 5));
      held();
    });
    const second = await poller(fake);

    while (first.channel.fault === undefined) await new Promise((r) => setTimeout(r, 10));
    expect(first.channel.fault).toMatch(/another process is polling/);
    expect(fake.calls.some((c) => c.method === 'getUpdates' && c.errorCode === 409)).toBe(true);

    fake.userSends({ chat: ALICE_DM, from: ALICE, text: '/status' });
    expect(((await second.inbox.next()) as Command).name).toBe('status');
    expect(second.channel.fault).toBeUndefined();
  });

  it('a leader polls on after a former leader’s one last poll ended its own with 409', async () => {
    const fake = await FakeTelegram.start();
    cleanups.push(() => fake.close());
    fake.addChat(ALICE_DM);
    const leader = await poller(fake, 20);
    const held = async () => {
      while (fake.waitingPolls === 0) await new Promise((r) => setTimeout(r, 5));
    };
    await held();
    // The former leader, paused through the takeover, wakes and asks once (then learns it lost).
    const asked = await fetch(`${fake.apiRoot}/bot${fake.token}/getUpdates`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ timeout: 0 }),
    });
    expect(asked.status).toBe(200);
    expect(fake.calls.some((c) => c.method === 'getUpdates' && c.errorCode === 409)).toBe(true);

    fake.userSends({ chat: ALICE_DM, from: ALICE, text: '/status' });
    let timer: NodeJS.Timeout | undefined;
    const gaveUp = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), slow(10_000));
    });
    const got = await Promise.race([leader.inbox.next(), gaveUp]);
    clearTimeout(timer);
    expect((got as Command | undefined)?.name).toBe('status');
    expect(leader.channel.fault).toBeUndefined();
  });
});
