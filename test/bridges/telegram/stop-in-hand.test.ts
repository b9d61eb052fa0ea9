/**
 * A poller stopped while it handles an update (a leader that lost its lease mid-press, issue 33)
 * leaves that update unconfirmed: the next poller on the token (the new leader) gets it and
 * applies it. So does an update the first one's handler declined because a newer leader took over
 * (nothing applied, nothing recorded). An update the first one finished is passed over by the
 * next one when both keep the applied ids in one store (bridge.db's channel state).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { UpdateDeclined } from '../../../src/bridges/declined.ts';
import type { Command, InboundEvent } from '../../../src/bridges/events.ts';
import { MemoryChannelState } from '../../../src/bridges/state.ts';
import type { TelegramChannel } from '../../../src/bridges/telegram/index.ts';
import { waitUntil } from '../../support/slowdown.ts';
import { ALICE, ALICE_DM, channelFor, FakeTelegram, Inbox } from './support.ts';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup() {
  const fake = await FakeTelegram.start();
  cleanups.push(() => fake.close());
  fake.addChat(ALICE_DM);
  return { fake, state: new MemoryChannelState() };
}

/** A started channel whose handler waits for `gate` (when given) before recording the event. */
async function poller(
  fake: FakeTelegram,
  state: MemoryChannelState,
  gate?: Promise<void>,
): Promise<{ channel: TelegramChannel; inbox: Inbox; entered: InboundEvent[] }> {
  const inbox = new Inbox();
  const entered: InboundEvent[] = [];
  const channel = channelFor(fake, { state });
  await channel.start(async (event) => {
    entered.push(event);
    await gate;
    inbox.push(event);
  });
  return { channel, inbox, entered };
}

describe('a Telegram poller stopped with an update in hand', () => {
  it('does not confirm it: the next poller gets it and applies it', async () => {
    const { fake, state } = await setup();
    let release = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const first = await poller(fake, state, gate);
    cleanups.push(() => release());
    fake.userSends({ chat: ALICE_DM, from: ALICE, text: '/status' });
    await waitUntil(() => first.entered.length === 1, { message: 'the update never arrived' });

    // The old leader stops while still handling it (its stop waits for the handler).
    const stopped = first.channel.stop();
    const second = await poller(fake, state);
    cleanups.push(() => second.channel.stop());
    await waitUntil(() => second.entered.length === 1, {
      message: 'the next poller never got the update in hand: the stop confirmed it to Telegram',
    });
    expect((second.entered[0] as Command).name).toBe('status');

    release();
    await stopped;
  });

  it('an update the handler declines (a newer leader took over) is left to the next poller', async () => {
    const { fake, state } = await setup();
    const first = channelFor(fake, { state });
    cleanups.push(() => first.stop());
    let declined = 0;
    await first.start(async () => {
      declined++;
      throw new UpdateDeclined('this bridge is no longer the leader');
    });
    fake.userSends({ chat: ALICE_DM, from: ALICE, text: '/status' });
    await waitUntil(() => declined === 1, { message: 'the update never arrived' });
    await first.stop();

    const second = await poller(fake, state);
    cleanups.push(() => second.channel.stop());
    await waitUntil(() => second.entered.length === 1, {
      message: 'the declined update was recorded or confirmed: the next poller never got it',
    });
    expect((second.entered[0] as Command).name).toBe('status');
  });

  it('an update finished before the stop and delivered again is passed over', async () => {
    const { fake, state } = await setup();
    const first = await poller(fake, state);
    const sent = fake.userSends({ chat: ALICE_DM, from: ALICE, text: '/status' });
    expect(((await first.inbox.next()) as Command).name).toBe('status');
    await first.channel.stop();
    // Delivered again, same update id (as Telegram does with what was not confirmed), then a new
    // message.
    fake.pushUpdate({ ...sent });
    fake.userSends({ chat: ALICE_DM, from: ALICE, text: '/run demo x' });
    const second = await poller(fake, state);
    cleanups.push(() => second.channel.stop());
    expect(((await second.inbox.next()) as Command).name).toBe('run');
    expect(second.entered).toHaveLength(1);
  });
});
