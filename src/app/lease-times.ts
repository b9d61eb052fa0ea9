/**
 * When a leader counts its lease lost, shared by the lease (leader-lease.ts, loaded only with
 * REDIS_URL) and what must be gone by then, such as the leader's open transactions (bridge-prep.ts).
 */

/** A holder that could not renew for this long (80 % of the ttl) counts its lease lost. */
export function leaseLostAfterMs(ttlMs: number): number {
  return Math.floor(ttlMs * 0.8);
}
