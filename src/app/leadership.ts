/**
 * The leader's side of several `serve` on one Postgres and Redis (serve-ha.ts): what its lease
 * gives the bridge, and the fence an inbound update passes before it is applied.
 */
import type { Kysely } from 'kysely';
import { UpdateDeclined } from '../bridges/declined.ts';
import type { InboundHandler } from '../bridges/events.ts';
import { currentFence, FencedError } from '../db/leader-fence.ts';
import type { Database as Schema } from '../db/schema.ts';
import { within } from '../within.ts';

/**
 * This process leads several `serve` on one Postgres and Redis (serve-ha.ts): its lease's
 * fencing token, checked by the outbox's writes and before each inbound update is applied.
 */
export interface Leadership {
  readonly token: number;
  /** This process as the lease names it. */
  readonly holder: string;
  /** Seconds since the lease was last renewed, for /metrics. */
  readonly leaseAgeSeconds: () => Promise<number | undefined>;
  /** A write or an update was refused by the fence: a newer leader exists, stop leading. */
  readonly onFenced: (err: FencedError) => void;
  /** What requests the standbys forward to this leader carry (http/forward.ts); a secret. */
  readonly forwardKey?: string;
  /** True while the lease was renewed lately (leader-lease.ts `fresh`): jobs are taken then. */
  readonly leaseFresh?: () => boolean;
  /** Bound of the queue's Redis commands (leader-lease.ts says why it follows the lease). */
  readonly redisCommandTimeoutMs?: number;
}

/**
 * The inbound handler of a leader: hands an update on only while `lead`'s token is the
 * database's (a paused old leader that wakes after a takeover applies nothing it still had in
 * hand) and until this process knows it lost the lease; it also knows which updates are still
 * being applied, so a losing leader can let them settle before it gives its runs up.
 */
export class FencedInbound {
  readonly #handle: InboundHandler;
  readonly #db: Kysely<Schema>;
  readonly #lead: Leadership;
  readonly #applying = new Set<Promise<void>>();
  #lost: string | undefined;

  constructor(handle: InboundHandler, db: Kysely<Schema>, lead: Leadership) {
    this.#handle = handle;
    this.#db = db;
    this.#lead = lead;
  }

  /** The handler the adapters call. */
  readonly handler: InboundHandler = async (event) => {
    this.#declineIfLost();
    const current = await currentFence(this.#db);
    if (current !== this.#lead.token) {
      const err = new FencedError(this.#lead.token, current);
      this.#lead.onFenced(err);
      // Declined, not failed: the adapter leaves the update for the new leader (declined.ts).
      throw new UpdateDeclined(err.message, { cause: err });
    }
    this.#declineIfLost();
    const applying = this.#handle(event);
    const settled = applying.then(
      () => undefined,
      () => undefined,
    );
    this.#applying.add(settled);
    try {
      await applying;
    } finally {
      this.#applying.delete(settled);
    }
  };

  /**
   * The lease is lost (`why`): every later update is declined (left for the new leader), and
   * this resolves once the updates being applied settled, or after `ms` (false then).
   */
  async stopTaking(why: string, ms: number): Promise<boolean> {
    this.#lost ??= why;
    if (this.#applying.size === 0) return true;
    const settled = Promise.all([...this.#applying]).then(() => true);
    return (await within(settled, ms)) === true;
  }

  #declineIfLost(): void {
    if (this.#lost !== undefined)
      throw new UpdateDeclined(`this bridge no longer leads (${this.#lost})`);
  }
}
