/**
 * Shared set-up for the Telegram adapter tests: a fake Bot API, a channel pointed at it, and an
 * inbox that hands out inbound events in arrival order.
 */
import type { ChannelLogger, InboundEvent } from '../../../src/bridges/channel.ts';
import { TelegramChannel } from '../../../src/bridges/telegram/index.ts';
import type { TelegramChannelOptions } from '../../../src/bridges/telegram/options.ts';
import { type FakeChat, FakeTelegram, type FakeUser } from '../../fakes/telegram.ts';

/** Inbound events in arrival order; `next()` waits for the next one. */
export class Inbox {
  readonly #events: InboundEvent[] = [];
  readonly #waiting: ((e: InboundEvent) => void)[] = [];
  /** Everything received so far. */
  readonly all: InboundEvent[] = [];

  /** Called by the channel's handler once it has finished with an event. */
  push(event: InboundEvent): void {
    this.all.push(event);
    const waiter = this.#waiting.shift();
    if (waiter) waiter(event);
    else this.#events.push(event);
  }

  /** The next event not yet taken. */
  next(): Promise<InboundEvent> {
    const event = this.#events.shift();
    return event ? Promise.resolve(event) : new Promise((resolve) => this.#waiting.push(resolve));
  }
}

/** A logger that keeps what it was told, so tests can read warnings and errors. */
export function recordingLogger(): ChannelLogger & { lines: { level: string; msg?: string }[] } {
  const lines: { level: string; msg?: string }[] = [];
  const at = (level: string) => (_obj: object, msg?: string) => {
    lines.push({ level, ...(msg !== undefined && { msg }) });
  };
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

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
