/**
 * The fake Telegram's updates waiting for getUpdates: queued until a poll with a later offset
 * confirms them, and the long polls held until an update arrives, their timeout passes, the
 * client gives up, or a second poller on the token ends them (409, as Telegram does).
 */
import type { ServerResponse } from 'node:http';
import { ApiError, type Json, TERMINATED_BY_OTHER_POLLER, type Update } from './telegram-wire.ts';

/** The queued updates and the polls waiting on them. */
export class PendingUpdates {
  #updates: Update[] = [];
  readonly #waiters = new Set<() => void>();
  readonly #heldPolls = new Set<() => void>(); // held getUpdates; another poller ends them (409)

  /** Updates queued (not yet confirmed). */
  get length(): number {
    return this.#updates.length;
  }

  /** getUpdates requests being held, waiting for an update. */
  get waitingPolls(): number {
    return this.#waiters.size;
  }

  /** Queues an update (without waking the polls: see `wake`). */
  push(update: Update): void {
    this.#updates.push(update);
  }

  /** Answers every held poll now. */
  wake(): void {
    for (const wake of this.#waiters) wake();
  }

  /** Drops every queued update. */
  clear(): void {
    this.#updates = [];
  }

  /** Takes every queued update out (for the webhook set meanwhile). */
  takeAll(): Update[] {
    return this.#updates.splice(0);
  }

  /** getUpdates: confirms by `offset`, then answers what is queued or holds up to `timeout` s. */
  async poll(p: Json, res: ServerResponse): Promise<Json[]> {
    const offset = Number(p.offset ?? 0);
    // Asking with an offset confirms (drops) every earlier update, as Telegram does.
    if (offset > 0) this.#updates = this.#updates.filter((u) => u.update_id >= offset);
    // A second poller on the token ends the poll being held, as Telegram does (409).
    for (const end of this.#heldPolls) end();
    const timeoutMs = Number(p.timeout ?? 0) * 1000;
    if (this.#updates.length === 0 && timeoutMs > 0) {
      const ended = await new Promise<boolean>((resolve) => {
        const done = (byOther = false) => {
          clearTimeout(timer);
          this.#waiters.delete(done);
          this.#heldPolls.delete(terminate);
          resolve(byOther);
        };
        const terminate = () => done(true);
        const timer = setTimeout(done, timeoutMs);
        this.#waiters.add(done);
        this.#heldPolls.add(terminate);
        res.once('close', () => done()); // the client gave up (grammY aborts on stop)
      });
      if (ended) throw new ApiError(409, TERMINATED_BY_OTHER_POLLER);
    }
    return this.#updates.slice(0, Number(p.limit ?? 100));
  }
}
