/**
 * The outbox (issue 15): every outgoing send and edit to Telegram, Slack and Discord is a row in
 * bridge.db before it is attempted, delivered at the pace of the platform's limits table.
 * docs/outbox.md describes the tables, the order rules and what a crash can and cannot repeat.
 */
import type { Channel, ChannelLogger, Platform } from '../channel.ts';
import type { MessageOwner } from '../messages.ts';
import { limitsOf } from './limits.ts';
import { Outbox, type OutboxFailure, type OutboxTimers } from './outbox.ts';
import { OutboxChannel } from './outbox-channel.ts';
import type { OutboxStorePort } from './store-port.ts';

export { DISCORD_LIMITS, limitsOf, SLACK_LIMITS, TELEGRAM_LIMITS } from './limits.ts';
export type { OutboxFailure } from './outbox.ts';
export { Outbox } from './outbox.ts';
export { OutboxChannel } from './outbox-channel.ts';
export { OutboxStore } from './store.ts';
export type { OutboxStorePort } from './store-port.ts';

/** Confirmed and failed rows are kept this long (for a look after an incident), then pruned. */
export const OUTBOX_KEEP_MS = 24 * 60 * 60 * 1000;

/** Platforms whose calls go through the outbox (the web console has no limits and no network). */
const PACED: ReadonlySet<Platform> = new Set(['telegram', 'slack', 'discord']);

/** Options of `withOutboxes`. */
export interface WithOutboxesOptions {
  readonly log?: ChannelLogger;
  readonly onFailure?: (failure: OutboxFailure) => void;
  readonly onConfirmed?: (owner: MessageOwner, ref: string | null) => void;
  readonly onRepeats?: (owner: MessageOwner, refs: readonly string[]) => void;
  readonly timers?: OutboxTimers;
}

/**
 * Wraps each chat platform's channel in an outbox over `store`; the web console is left as is.
 * Returns the channels to use and the outboxes, to be stopped after chatops' last flush.
 */
export function withOutboxes(
  channels: ReadonlyMap<Platform, Channel>,
  store: OutboxStorePort,
  options: WithOutboxesOptions = {},
): { channels: Map<Platform, Channel>; outboxes: Outbox[] } {
  const pruned = store.prune(Date.now() - OUTBOX_KEEP_MS);
  // Postgres answers later: old rows go in the background, delivery does not wait for it.
  if (pruned instanceof Promise)
    pruned.catch((err: unknown) => options.log?.warn({ err }, 'outbox: old rows not pruned'));
  const wrapped = new Map<Platform, Channel>();
  const outboxes: Outbox[] = [];
  for (const [platform, inner] of channels) {
    if (!PACED.has(platform)) {
      wrapped.set(platform, inner);
      continue;
    }
    const outbox = new Outbox({ store, inner, limits: limitsOf(platform), ...options });
    outboxes.push(outbox);
    wrapped.set(platform, new OutboxChannel(inner, outbox));
  }
  return { channels: wrapped, outboxes };
}
