/**
 * The fencing token of the leader lease in bridge.db (`leader_fence`, migration 0045). A new
 * leader writes its token, which only ever goes up; a write that must not happen twice compares
 * its process's token with the row in the same transaction, under `FOR SHARE`, so it either lands
 * before a newer leader's claim commits or sees the newer token and lands nothing.
 */
import type { Kysely } from 'kysely';
import { PhasebridgeError } from '../errors.ts';
import type { Database as Schema } from './schema.ts';

/** The one row's name: one leader per database. */
const NAME = 'bridge';

/** A write refused because a newer leader holds the lease (this process is a fenced old leader). */
export class FencedError extends PhasebridgeError {
  /** Our token and the newer one in the database. */
  constructor(
    readonly ours: number,
    readonly current: number | undefined,
  ) {
    super(
      'CONFLICT',
      `this bridge is no longer the leader (its fencing token ${ours}, the database's ${current ?? 'none'}): nothing written`,
    );
  }
}

/**
 * Writes `token` as the current one unless a higher one is there already; false when it is (a
 * newer leader took over meanwhile: ours is stale and must not lead).
 */
export async function claimFence(
  db: Kysely<Schema>,
  token: number,
  holder: string,
  now: number = Date.now(),
): Promise<boolean> {
  const res = await db
    .insertInto('leader_fence')
    .values({ name: NAME, token, holder, acquired_at: now })
    .onConflict((oc) =>
      oc
        .column('name')
        .doUpdateSet({ token, holder, acquired_at: now })
        .where('leader_fence.token', '<', token),
    )
    .executeTakeFirst();
  return Number(res.numInsertedOrUpdatedRows ?? 0n) === 1;
}

/** The current token in the database, or undefined before any leader claimed one. */
export async function currentFence(db: Kysely<Schema>): Promise<number | undefined> {
  const row = await db
    .selectFrom('leader_fence')
    .select('token')
    .where('name', '=', NAME)
    .executeTakeFirst();
  return row === undefined ? undefined : Number(row.token);
}

/**
 * Throws FencedError unless `token` is the current one. Inside a Postgres transaction `tx`, the
 * row is read `FOR SHARE`: a newer leader's claim waits for this transaction, and a transaction
 * started after the claim sees the new token.
 */
export async function assertFence(tx: Kysely<Schema>, token: number): Promise<void> {
  const row = await tx
    .selectFrom('leader_fence')
    .select('token')
    .where('name', '=', NAME)
    .forShare()
    .executeTakeFirst();
  const current = row === undefined ? undefined : Number(row.token);
  if (current !== token) throw new FencedError(token, current);
}
