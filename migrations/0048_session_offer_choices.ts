/**
 * 0048_session_offer_choices (issue 39): a session offer's choice survives a kill of `serve`.
 * - run_id: the phasebridge run behind the session, so a choice can be applied again once the
 *   session's state file is gone (a restart that cleared `.coordinator/` then died).
 * - decision_key / decided_in: the press's idempotency key and chat, so the next process applies
 *   a choice the dead one recorded but never finished, under the same engine keys (once).
 * - outcome: what the choice did, in words; null while it is being applied.
 * - decision_shown: the copy's message shows the choice (no live buttons); 0 from the choice
 *   until its edit is confirmed, so the next start edits (or re-posts) what a kill left live.
 * - repeat_of: a message the platform got twice (a kill in the send window), found and made
 *   buttonless by the outbox; kept as a copy of the offer so it shows the choice too.
 */
import type { Kysely } from 'kysely';

/** Adds the columns. */
export async function up(db: Kysely<unknown>): Promise<void> {
  const t = () => db.schema.alterTable('session_offers');
  await t().addColumn('run_id', 'text').execute();
  await t().addColumn('decision_key', 'text').execute();
  await t().addColumn('decided_in', 'text').execute();
  await t().addColumn('outcome', 'text').execute();
  // Copies closed before this migration were edited by the process that closed them.
  await t()
    .addColumn('decision_shown', 'integer', (c) => c.notNull().defaultTo(1))
    .execute();
  await t().addColumn('repeat_of', 'integer').execute();
}

/** Removes what `up` added. */
export async function down(db: Kysely<unknown>): Promise<void> {
  for (const c of [
    'repeat_of',
    'decision_shown',
    'outcome',
    'decided_in',
    'decision_key',
    'run_id',
  ]) {
    await db.schema.alterTable('session_offers').dropColumn(c).execute();
  }
}
