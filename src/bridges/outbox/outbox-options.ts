/**
 * What an Outbox is given and what it reports: its options (store, adapter, limits, clock) and
 * the failure it tells `onFailure` about.
 */
import type { PhasebridgeError } from '../../errors.ts';
import type { Channel, ChannelLogger } from '../channel.ts';
import type { MessageOwner, OutgoingMessage } from '../messages.ts';
import type { OutboxKind, PlatformLimits } from './limits.ts';
import type { OutboxStorePort } from './store-port.ts';

/** Time and timers, injectable so tests drive a simulated clock. */
export interface OutboxTimers {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** The real clock. */
export const REAL_OUTBOX_TIMERS: OutboxTimers = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (h) => clearTimeout(h as ReturnType<typeof setTimeout>),
};

/**
 * A row given up on (a permanent platform error: 403, kicked, bad input…), or, `moved`, a send
 * whose chat got a new id: that row and the chat's other waiting sends go to the new id instead.
 */
export interface OutboxFailure {
  readonly id: number;
  readonly platform: string;
  readonly kind: OutboxKind;
  /** Chat ref of a send, message ref of an edit. */
  readonly target: string;
  readonly lane: string;
  readonly message: OutgoingMessage;
  readonly error: PhasebridgeError;
  /** A caller waited for this row and got the error (it acts on it itself). */
  readonly waited: boolean;
  /** The chat moved (`error.movedTo`): the row was re-queued there, not failed. */
  readonly moved: boolean;
}

/** Options of `Outbox`. */
export interface OutboxOptions {
  readonly store: OutboxStorePort;
  /** The platform adapter that makes the calls (its own 429 waits stay in place). */
  readonly inner: Channel;
  readonly limits: PlatformLimits;
  readonly timers?: OutboxTimers;
  readonly log?: ChannelLogger;
  /** Told of every row marked failed (the hook for "unreachable chat" handling). */
  readonly onFailure?: (failure: OutboxFailure) => void;
  /** Told of every owned call confirmed, after its owner took the result (owners.ts). */
  readonly onConfirmed?: (owner: MessageOwner, ref: string | null) => void;
  /**
   * Told of the earlier copies of an owned send made again after a restart, found and stripped
   * of their buttons by the adapter (`Channel.clearRepeats`): the owner may show more on them.
   */
  readonly onRepeats?: (owner: MessageOwner, refs: readonly string[]) => void;
}
