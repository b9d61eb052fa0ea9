/**
 * Updates already applied, so one Telegram redelivers is applied once. Telegram sends an update
 * again when a webhook call answered non-2xx or not within its timeout (even when the bridge did
 * apply it, only slowly), and getUpdates returns a batch again when the process stopped before
 * confirming it. Kept in the channel state store (bridge.db under a bridge, so across a
 * restart) for as long as Telegram keeps an undelivered update; update ids are not reused within
 * that time (Telegram restarts them at random only after a week without updates).
 */
import type { ChannelLogger } from '../channel.ts';
import { isDeclined } from '../declined.ts';
import { type ChannelStateStore, MemoryChannelState } from '../state.ts';

/** Telegram keeps an update it could not deliver for 24 hours. */
export const UPDATE_MEMORY_MS = 24 * 60 * 60 * 1000;

const keyOf = (updateId: number) => `update:${updateId}`;

/** Which update ids were applied (durably) or are being applied now (in this process). */
export class AppliedUpdates {
  readonly #store: ChannelStateStore;
  readonly #log: ChannelLogger;
  readonly #inHand = new Set<number>();

  /** Kept in `store` (default: memory, forgotten on restart). */
  constructor(store: ChannelStateStore | undefined, log: ChannelLogger) {
    this.#store = store ?? new MemoryChannelState();
    this.#log = log;
  }

  /**
   * Runs `apply` unless this update was applied before or is being applied now; records it once
   * `apply` settled (a crash part-way leaves it unrecorded: the redelivery is applied then),
   * unless `apply` declined it (declined.ts: another process leads now and will apply it).
   */
  async once(updateId: number, apply: () => Promise<void>): Promise<void> {
    if (this.#inHand.has(updateId) || (await this.#seen(updateId))) {
      this.#log.info({ updateId }, 'telegram: update delivered again, already applied');
      return;
    }
    this.#inHand.add(updateId);
    let declined = false;
    try {
      await apply();
    } catch (err) {
      // Not applied here at all: left unrecorded for the process that leads now.
      declined = isDeclined(err);
      throw err;
    } finally {
      if (declined) this.#inHand.delete(updateId);
      else {
        await this.#store
          .set(keyOf(updateId), '1', UPDATE_MEMORY_MS)
          .catch((err: unknown) =>
            this.#log.warn({ err, updateId }, 'telegram: update not recorded'),
          )
          .finally(() => this.#inHand.delete(updateId));
      }
    }
  }

  async #seen(updateId: number): Promise<boolean> {
    try {
      return (await this.#store.get(keyOf(updateId))) !== undefined;
    } catch (err) {
      // Better applied twice (commands are idempotent by key further on) than lost.
      this.#log.warn({ err, updateId }, 'telegram: applied updates not readable');
      return false;
    }
  }
}
