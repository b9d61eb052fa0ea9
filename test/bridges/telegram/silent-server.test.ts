/**
 * A Bot API server that takes a request and never answers (a proxy that went quiet, a half-open
 * connection): the channel gives up on that call after its request timeout, instead of grammY's
 * own 500 s, so start-up fails in time to be retried and polling carries on.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Command } from '../../../src/bridges/events.ts';
import type { TelegramChannel } from '../../../src/bridges/telegram/index.ts';
import { validateTelegramOptions } from '../../../src/bridges/telegram/options.ts';
import { slow } from '../../support/slowdown.ts';
import { ALICE, ALICE_DM, channelFor, FakeTelegram, Inbox } from './support.ts';

let fake: FakeTelegram;
let channel: TelegramChannel | undefined;

beforeEach(async () => {
  fake = await FakeTelegram.start();
  fake.addChat(ALICE_DM);
});

afterEach(async () => {
  await channel?.stop();
  channel = undefined;
  await fake.close();
});

describe('TelegramChannel against a Bot API that goes silent', () => {
  it(
    'fails a start whose getMe is never answered, saying it timed out, and starts on retry',
    async () => {
      fake.holdNext('getMe');
      channel = channelFor(fake, { pollingTimeoutSeconds: 1, requestTimeoutSeconds: 2 });
      const inbox = new Inbox();
      await expect(channel.start(inbox.handler)).rejects.toMatchObject({
        code: 'PLATFORM',
        message: expect.stringMatching(/getMe.*timed out after 2 seconds/),
      });
      // The supervisor's next attempt finds the server answering again.
      await channel.start(inbox.handler);
      fake.userSends({ chat: ALICE_DM, from: ALICE, text: '/status' });
      expect(((await inbox.next()) as Command).name).toBe('status');
    },
    slow(20_000),
  );

  it(
    'keeps polling after a getUpdates that is never answered: the next message arrives',
    async () => {
      channel = channelFor(fake, { pollingTimeoutSeconds: 1, requestTimeoutSeconds: 2 });
      const inbox = new Inbox();
      await channel.start(inbox.handler);
      const polls = fake.okCalls('getUpdates').length;
      fake.holdNext('getUpdates');
      await fake.waitForCalls('getUpdates', polls + 1);
      fake.userSends({ chat: ALICE_DM, from: ALICE, text: '/status' });
      expect(((await inbox.next()) as Command).name).toBe('status');
    },
    slow(30_000),
  );

  it('refuses a request timeout that is not longer than the polling hold', () => {
    const problems = validateTelegramOptions({
      token: fake.token,
      commands: [],
      pollingTimeoutSeconds: 30,
      requestTimeoutSeconds: 30,
    });
    expect(problems.map((p) => p.path)).toEqual(['telegram.requestTimeoutSeconds']);
  });
});
