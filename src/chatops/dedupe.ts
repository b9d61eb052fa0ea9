/**
 * Remembers recently seen idempotency keys, so an event delivered twice (a platform retry, a
 * webhook redelivery) is handled once. Bounded: the oldest keys are forgotten first. In memory
 * only; engine commands are also deduplicated by the ledger, admin commands by the audit table.
 */
export class RecentKeys {
  readonly #capacity: number;
  readonly #keys = new Set<string>();

  /** Keeps at most `capacity` keys. */
  constructor(capacity = 10_000) {
    this.#capacity = capacity;
  }

  /** Records `key`; false when it was already there (a duplicate). */
  add(key: string): boolean {
    if (this.#keys.has(key)) return false;
    this.#keys.add(key);
    // A Set iterates in insertion order, so the first key is the oldest.
    if (this.#keys.size > this.#capacity) this.#keys.delete(this.#keys.values().next().value!);
    return true;
  }

  /** Forgets `key` (e.g. when handling it failed before anything happened). */
  delete(key: string): void {
    this.#keys.delete(key);
  }
}
