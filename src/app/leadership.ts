/**
 * The leader's side of several `serve` on one Postgres and Redis (serve-ha.ts): what its lease
 * gives the bridge, and the fence an inbound update passes before it is applied.
 */
import type { Kysely } from 'kysely';
import { UpdateDeclined } from '../bridges/declined.ts';
import type { InboundHandler } from '../bridges/events.ts';
import { currentFence, FencedError } from '../db/leader-fence.ts';
import type { Database as Schema } from '../db/schema.ts';

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
  /** Bound of the queue's Redis commands (leader-lease.ts says why it follows the lease). */
  readonly redisCommandTimeoutMs?: number;
}

/**
 * Hands an update on only while `lead`'s token is the database's: a paused old leader that wakes
 * after a takeover applies nothing it still had in hand (the new leader gets it again).
 */
export function fencedHandler(
  handle: InboundHandler,
  db: Kysely<Schema>,
  lead: Leadership,
): InboundHandler {
  return async (event) => {
    const current = await currentFence(db);
    if (current !== lead.token) {
      const err = new FencedError(lead.token, current);
      lead.onFenced(err);
      // Declined, not failed: the adapter leaves the update for the new leader (declined.ts).
      throw new UpdateDeclined(err.message, { cause: err });
    }
    await handle(event);
  };
}
