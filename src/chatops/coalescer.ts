/**
 * Coalesces work per key: the latest task wins, tasks of one key never overlap, and a key's
 * tasks start at most once per interval. Used so a status message is edited at most once a
 * second however fast a run moves (chat platforms rate-limit edits).
 */

/** Time and timers, injectable so tests can drive a fake clock. */
export interface Timers {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** The real clock and timers. */
export const REAL_TIMERS: Timers = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (h) => clearTimeout(h as ReturnType<typeof setTimeout>),
};

interface Slot {
  latest?: () => Promise<void>;
  running?: Promise<void>;
  timer?: unknown;
  lastStart: number;
  idle: (() => void)[];
}

/** Per-key latest-wins scheduler with a minimum interval between task starts. */
export class Coalescer {
  readonly #intervalMs: number;
  readonly #timers: Timers;
  readonly #onError: (err: unknown) => void;
  readonly #slots = new Map<string, Slot>();

  /** `onError` receives a failed task's error; the key stays usable. */
  constructor(intervalMs: number, onError: (err: unknown) => void, timers: Timers = REAL_TIMERS) {
    this.#intervalMs = intervalMs;
    this.#onError = onError;
    this.#timers = timers;
  }

  /**
   * Replaces the key's pending task with `task` and makes sure it runs. `now`: start it without
   * waiting for the interval (still after a running task of the key): for a state people must
   * see at once, on a channel that paces and coalesces edits itself.
   */
  push(key: string, task: () => Promise<void>, now = false): void {
    let slot = this.#slots.get(key);
    if (!slot) {
      slot = { lastStart: Number.NEGATIVE_INFINITY, idle: [] };
      this.#slots.set(key, slot);
    }
    slot.latest = task;
    if (now) {
      if (slot.timer !== undefined) this.#timers.clearTimeout(slot.timer);
      slot.timer = undefined;
      slot.lastStart = Number.NEGATIVE_INFINITY;
    }
    this.#arm(key, slot);
  }

  /** Resolves once the key has nothing pending or running (pending work still honours the interval). */
  settled(key: string): Promise<void> {
    const slot = this.#slots.get(key);
    if (!slot || (!slot.latest && !slot.running)) return Promise.resolve();
    return new Promise((resolve) => slot.idle.push(resolve));
  }

  /** Runs every pending task now, ignoring the interval, and waits for all of them. */
  async flushAll(): Promise<void> {
    const waits: Promise<void>[] = [];
    for (const [key, slot] of this.#slots) {
      if (slot.timer !== undefined && !slot.running) {
        this.#timers.clearTimeout(slot.timer);
        slot.timer = undefined;
        this.#start(key, slot);
      }
      waits.push(this.settled(key));
    }
    await Promise.all(waits);
  }

  /** Forgets a key: its pending task is dropped; a running task finishes. */
  forget(key: string): void {
    const slot = this.#slots.get(key);
    if (!slot) return;
    if (slot.timer !== undefined) this.#timers.clearTimeout(slot.timer);
    slot.timer = undefined;
    slot.latest = undefined;
    this.#slots.delete(key);
    if (!slot.running) for (const resolve of slot.idle.splice(0)) resolve();
  }

  #arm(key: string, slot: Slot): void {
    if (slot.running || slot.timer !== undefined || !slot.latest) return;
    const wait = slot.lastStart + this.#intervalMs - this.#timers.now();
    if (wait <= 0) {
      this.#start(key, slot);
      return;
    }
    slot.timer = this.#timers.setTimeout(() => {
      slot.timer = undefined;
      this.#start(key, slot);
    }, wait);
  }

  #start(key: string, slot: Slot): void {
    const task = slot.latest;
    if (!task) return;
    slot.latest = undefined;
    slot.lastStart = this.#timers.now();
    slot.running = Promise.resolve()
      .then(task)
      .catch(this.#onError)
      .finally(() => {
        slot.running = undefined;
        if (slot.latest) this.#arm(key, slot);
        else for (const resolve of slot.idle.splice(0)) resolve();
      });
  }
}
