/**
 * Write-behind to the console's state store: the console answers from memory at once, and its
 * changes reach the store in the order they were made. A failed write is logged, not thrown: the
 * console keeps working, it only forgets that change on a restart.
 */
import type { ChannelLogger } from '../channel.ts';
import type { ChannelStateStore } from '../state.ts';

/** Queues writes to one store, in call order. */
export class StateWriter {
  readonly #store: ChannelStateStore;
  readonly #log: ChannelLogger;
  #tail: Promise<void> = Promise.resolve();

  /** Writes go to `store`; failures are logged to `log`. */
  constructor(store: ChannelStateStore, log: ChannelLogger) {
    this.#store = store;
    this.#log = log;
  }

  /** The store written to (for reading at start-up). */
  get store(): ChannelStateStore {
    return this.#store;
  }

  /** Queues storing a JSON value under `key` (forgotten after `ttlMs` when given). */
  put(key: string, value: unknown, ttlMs?: number): void {
    this.#enqueue(key, () => this.#store.set(key, JSON.stringify(value), ttlMs));
  }

  /** Queues removing `key`. */
  remove(key: string): void {
    this.#enqueue(key, () => this.#store.delete(key));
  }

  /** Resolves once every write queued so far is done (or failed and logged). */
  flushed(): Promise<void> {
    return this.#tail;
  }

  #enqueue(key: string, write: () => Promise<void>): void {
    this.#tail = this.#tail
      .then(write)
      .catch((err: unknown) => this.#log.warn({ err, key }, 'web: console state not saved'));
  }
}
