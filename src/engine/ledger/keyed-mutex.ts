/**
 * An in-process mutex per key (a run id): tasks for the same key run one after another, tasks
 * for different keys run concurrently. Entries are dropped when idle, so the map stays small.
 */
export class KeyedMutex {
  readonly #tails = new Map<string, Promise<unknown>>();

  /** Runs `task` once every earlier task for `key` has settled; returns its result. */
  run<T>(key: string, task: () => Promise<T> | T): Promise<T> {
    const previous = this.#tails.get(key) ?? Promise.resolve();
    const result = previous.then(task, task);
    // The stored tail must never reject, or the next task would see the previous one's failure.
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    this.#tails.set(key, tail);
    void tail.then(() => {
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    });
    return result;
  }

  /** Resolves once every task queued so far (for any key) has settled. */
  async drain(): Promise<void> {
    while (this.#tails.size > 0) await Promise.all([...this.#tails.values()]);
  }
}
