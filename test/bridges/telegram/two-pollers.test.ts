/**
 * Two processes polling one bot token, from the fake's own state (no injected error): the second
 * poller's getUpdates ends the first one's held poll with 409, as Telegram does. The first
 * adapter reports a fault (shown in /readyz) and stops polling instead of fighting; the second
 * keeps receiving.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Command } from '../../../src/bridges/events.ts';
import type { TelegramChannel } from '../../../src/bridges/telegram/index.ts';
import { ALICE, ALICE_DM, channelFor, FakeTelegram, Inbox, recordingLogger } from './support.ts';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function poller(fake: FakeTelegram): Promise<{ channel: TelegramChannel; inbox: Inbox }> {
  const inbox = new Inbox();
  const channel = channelFor(fake, { logger: recordingLogger() });
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
});
