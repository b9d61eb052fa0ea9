/**
 * The fake Slack's server-side clock: what Slack measures on its own side (trigger ids valid 3 s,
 * response_urls 30 minutes, the 3 s ack deadline, the minutes between event retries, a
 * workspace's edit window). It runs with real time, and a test can move it forward so a 30-minute
 * expiry or a 5-minute retry happens at once. Request signing keeps real time on purpose: the
 * adapter checks signatures against its own clock, which a test does not move.
 */

/** A timer on the fake clock. */
interface Timer {
  readonly at: number;
  readonly fire: () => void;
  readonly real: ReturnType<typeof setTimeout>;
}

/** Real time plus whatever the test added with `advance`. */
export class FakeClock {
  #offset = 0;
  readonly #timers = new Set<Timer>();

  /** Now on the fake's side, ms. */
  now(): number {
    return Date.now() + this.#offset;
  }

  /** Moves time forward by `ms`; timers now due fire, in order. */
  advance(ms: number): void {
    this.#offset += ms;
    const due = [...this.#timers].filter((t) => t.at <= this.now()).sort((a, b) => a.at - b.at);
    for (const t of due) this.#run(t);
  }

  /** Runs `fire` once `ms` have passed on this clock (really, or by `advance`); returns a cancel. */
  after(ms: number, fire: () => void): () => void {
    const timer: Timer = {
      at: this.now() + ms,
      fire,
      real: setTimeout(() => this.#run(timer), ms),
    };
    // A retry five minutes away must not keep a test process alive.
    timer.real.unref();
    this.#timers.add(timer);
    return () => this.#cancel(timer);
  }

  /** Cancels every pending timer (the fake is closing). */
  stop(): void {
    for (const t of this.#timers) this.#cancel(t);
  }

  #run(t: Timer): void {
    if (!this.#timers.has(t)) return;
    this.#cancel(t);
    t.fire();
  }

  #cancel(t: Timer): void {
    clearTimeout(t.real);
    this.#timers.delete(t);
  }
}
