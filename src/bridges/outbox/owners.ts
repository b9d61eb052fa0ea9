/**
 * The write-back of a delivered call to the row that asked for it (issue 39), run inside the
 * transaction that confirms the outbox row: whichever process delivers a send, the checkpoint
 * copy, status message or session offer learns its message id, and a decision edit (of a
 * checkpoint copy, or a session offer's closing) is marked shown. A crash can no longer leave a
 * delivered checkpoint message without its id.
 */
import type Database from 'better-sqlite3';
import { type Kysely, sql } from 'kysely';
import type { Database as Schema } from '../../db/schema.ts';
import type { MessageOwner } from '../messages.ts';

/** The owner stored with a row (`owner_json`), or null when the JSON is not one we write. */
export function parseOwner(json: string | null): MessageOwner | null {
  if (json === null) return null;
  try {
    const o = JSON.parse(json) as Partial<Record<string, unknown>>;
    if (o.kind === 'status' && typeof o.runId === 'string' && typeof o.chatRef === 'string') {
      return { kind: 'status', runId: o.runId, chatRef: o.chatRef };
    }
    if (
      (o.kind === 'checkpoint' ||
        o.kind === 'offer' ||
        o.kind === 'decision' ||
        o.kind === 'offerClosed') &&
      typeof o.id === 'number'
    ) {
      return { kind: o.kind, id: o.id };
    }
  } catch {
    // not ours: no owner
  }
  return null;
}

/** The JSON stored for `owner` (fixed key order, so equal owners store equal text). */
export function ownerJson(owner: MessageOwner | undefined): string | null {
  if (owner === undefined) return null;
  if (owner.kind === 'status') {
    return JSON.stringify({ kind: 'status', runId: owner.runId, chatRef: owner.chatRef });
  }
  return JSON.stringify({ kind: owner.kind, id: owner.id });
}

/**
 * Tells `owner` the result of its call (`ref`: the sent message's ref, null for an edit). Never
 * overwrites a ref already known (the waiting caller may have written it first, or a newer
 * status message replaced a lost one); a status message of a run no longer indexed is skipped.
 */
export function applyOwner(
  db: Database.Database,
  owner: MessageOwner,
  ref: string | null,
  now: number,
): void {
  switch (owner.kind) {
    case 'checkpoint':
      if (ref === null) return;
      db.prepare(
        `update checkpoint_messages set message_ref = ?, updated_at = ? where id = ? and message_ref is null`,
      ).run(ref, now, owner.id);
      return;
    case 'decision':
      // A re-posted decision (a send) is the copy's message from now on.
      db.prepare(
        `update checkpoint_messages set decision_shown = 1, message_ref = coalesce(?, message_ref), updated_at = ? where id = ?`,
      ).run(ref, now, owner.id);
      return;
    case 'offerClosed':
      // A session offer copy's closing edit, or its closing re-posted (then its message).
      db.prepare(
        `update session_offers set decision_shown = 1, message_ref = coalesce(?, message_ref), updated_at = ? where id = ?`,
      ).run(ref, now, owner.id);
      return;
    case 'offer':
      if (ref === null) return;
      db.prepare(
        `update session_offers set message_ref = ?, updated_at = ? where id = ? and message_ref is null`,
      ).run(ref, now, owner.id);
      return;
    case 'status':
      if (ref === null) return;
      db.prepare(
        `insert into status_messages (run_id, chat_ref, message_ref, created_at, updated_at)
         select ?, ?, ?, ?, ? where exists (select 1 from runs where id = ? and status not in ('completed', 'failed', 'cancelled'))
         on conflict (run_id, chat_ref) do nothing`,
      ).run(owner.runId, owner.chatRef, ref, now, now, owner.runId);
      return;
  }
}

/** `applyOwner` through kysely (Postgres), the same writes in the caller's transaction `tx`. */
export async function applyOwnerKysely(
  tx: Kysely<Schema>,
  owner: MessageOwner,
  ref: string | null,
  now: number,
): Promise<void> {
  switch (owner.kind) {
    case 'checkpoint':
      if (ref === null) return;
      await tx
        .updateTable('checkpoint_messages')
        .set({ message_ref: ref, updated_at: now })
        .where('id', '=', owner.id)
        .where('message_ref', 'is', null)
        .execute();
      return;
    case 'decision':
      await tx
        .updateTable('checkpoint_messages')
        .set({
          decision_shown: 1,
          message_ref: sql<string | null>`coalesce(${ref}, message_ref)`,
          updated_at: now,
        })
        .where('id', '=', owner.id)
        .execute();
      return;
    case 'offerClosed':
      await tx
        .updateTable('session_offers')
        .set({
          decision_shown: 1,
          message_ref: sql<string | null>`coalesce(${ref}, message_ref)`,
          updated_at: now,
        })
        .where('id', '=', owner.id)
        .execute();
      return;
    case 'offer':
      if (ref === null) return;
      await tx
        .updateTable('session_offers')
        .set({ message_ref: ref, updated_at: now })
        .where('id', '=', owner.id)
        .where('message_ref', 'is', null)
        .execute();
      return;
    case 'status':
      if (ref === null) return;
      await sql`insert into status_messages (run_id, chat_ref, message_ref, created_at, updated_at)
        select ${owner.runId}, ${owner.chatRef}, ${ref}, cast(${now} as bigint), cast(${now} as bigint)
        where exists (select 1 from runs where id = ${owner.runId} and status not in ('completed', 'failed', 'cancelled'))
        on conflict (run_id, chat_ref) do nothing`.execute(tx);
      return;
  }
}
