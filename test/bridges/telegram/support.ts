/**
 * Shared set-up for the Telegram adapter tests: a fake Bot API, a channel pointed at it, and an
 * inbox that hands out inbound events in arrival order.
 */
import { TelegramChannel } from '../../../src/bridges/telegram/index.ts';
import type { TelegramChannelOptions } from '../../../src/bridges/telegram/options.ts';
import { type FakeChat, FakeTelegram, type FakeUser } from '../../fakes/telegram.ts';
import { Inbox, recordingLogger } from '../inbox.ts';

export { Inbox, recordingLogger };

/** A person in the tests. */
export const ALICE: FakeUser = { id: 501, first_name: 'Alice', username: 'alice' };
/** Alice's private chat with the bot. */
export const ALICE_DM: FakeChat = { id: 501, type: 'private' };
/** A forum supergroup. */
export const FORUM: FakeChat = {
  id: -1001234567890,
  type: 'supergroup',
  title: 'Ops',
  is_forum: true,
};

/** Builds a channel for the fake (polling unless `webhook` is given). */
export function channelFor(
  fake: FakeTelegram,
  extra: Partial<TelegramChannelOptions> = {},
): TelegramChannel {
  return new TelegramChannel({
    token: fake.token,
    apiRoot: fake.apiRoot,
    commands: [
      { command: 'run', description: 'Start a run' },
      { command: 'status', description: 'Show runs' },
    ],
    logger: recordingLogger(),
    ...extra,
  });
}

export { FakeTelegram };
