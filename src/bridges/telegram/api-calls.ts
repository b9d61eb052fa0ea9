/**
 * The Bot API as the Telegram channel's helpers (interactions.ts, repeats.ts) call it: each call
 * retried on 429 (../delivery.ts), and one queue per chat so its messages arrive in order.
 */
import type { Api } from 'grammy';
import type { ChannelLogger } from '../channel.ts';
import type { SerialQueues } from '../delivery.ts';

/** The channel's bot API, per-chat queues, logger and retried call. */
export interface TelegramCalls {
  readonly api: Api;
  readonly queues: SerialQueues;
  readonly log: ChannelLogger;
  /** Makes `call` with the channel's 429 retries; its errors as PhasebridgeErrors. */
  call<T>(call: () => Promise<T>): Promise<T>;
}
