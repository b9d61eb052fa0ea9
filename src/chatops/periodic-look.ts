/**
 * A look repeated every `intervalMs` (activity lines, followed ledgers, tool approvals): never
 * two at once (a slow look makes the next tick skip), unref'd so it never holds the process,
 * and `stop` waits for the look in progress so nothing is sent after it returns.
 */
export class PeriodicLook {
  readonly #intervalMs: number;
  readonly #look: () => Promise<void>;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | null = null;

  /** `look` must not reject (catch and log inside it); it is never called twice at once. */
  constructor(intervalMs: number, look: () => Promise<void>) {
    this.#intervalMs = intervalMs;
    this.#look = look;
  }

  /** Starts the periodic looks (again after a stop; a second start does nothing). */
  start(): void {
    if (this.#timer) return;
    this.#timer = setInterval(() => {
      this.#running ??= this.#look().finally(() => {
        this.#running = null;
      });
    }, this.#intervalMs);
    this.#timer.unref();
  }

  /** Stops the looks and waits for the one in progress. */
  async stop(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#running;
  }
}
