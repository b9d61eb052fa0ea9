/**
 * Checkpoint expiry timers: one per open checkpoint with an `expiresAt`. They live in memory
 * only; the orchestrator re-arms them at start-up from the runs' open checkpoints, and the
 * `expire:<checkpointId>` key makes a timer firing in two processes count once.
 */

/** setTimeout's limit (about 24.8 days); longer waits are chained. */
const MAX_TIMEOUT_MS = 2 ** 31 - 1;

/** Timers by checkpoint, cleared on close. */
export class ExpiryTimers {
  readonly #timers = new Map<string, NodeJS.Timeout>();
  readonly #now: () => number;
  #closed = false;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /** Number of armed timers. */
  get size(): number {
    return this.#timers.size;
  }

  /** Calls `fire` at `at` (ISO); a time in the past fires at once. Re-arming replaces the timer. */
  arm(runId: string, checkpointId: string, at: string, fire: () => void): void {
    if (this.#closed) return;
    const key = `${runId}/${checkpointId}`;
    this.disarm(runId, checkpointId);
    const due = Date.parse(at);
    const schedule = (): void => {
      const wait = Number.isNaN(due) ? 0 : Math.max(0, due - this.#now());
      const timer = setTimeout(
        () => {
          if (wait > MAX_TIMEOUT_MS) {
            schedule();
            return;
          }
          this.#timers.delete(key);
          fire();
        },
        Math.min(wait, MAX_TIMEOUT_MS),
      );
      // A pending expiry alone must not keep a CLI process alive.
      timer.unref();
      this.#timers.set(key, timer);
    };
    schedule();
  }

  /** Cancels the timer of a checkpoint, if any. */
  disarm(runId: string, checkpointId: string): void {
    const key = `${runId}/${checkpointId}`;
    clearTimeout(this.#timers.get(key));
    this.#timers.delete(key);
  }

  /** Cancels every timer; later `arm` calls do nothing. */
  close(): void {
    this.#closed = true;
    for (const t of this.#timers.values()) clearTimeout(t);
    this.#timers.clear();
  }
}
