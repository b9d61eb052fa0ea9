/**
 * Chat messages offering an interrupted session as Resume / Restart / Abort (`session_offers`).
 * An offer is keyed by workspace, kind, session and the state it was offered in; each copy (one
 * per chat, or per `sessions` command) has its own button token. `decide` closes every open
 * copy of the key at once and says whether this call did it, so a choice is applied once.
 */
import type { Kysely } from 'kysely';
import type { Database, Row } from '../schema.ts';
import { newButtonToken } from './checkpoint-messages.ts';
import { type Clock, type RepoOptions, sendInFlightFor } from './support.ts';

/** Which session an offer is about (and in which state it was offered). */
export interface SessionKey {
  workspace: string;
  kind: 'coordinator' | 'flow';
  session: string;
  state: string;
}

/** One posted (or about to be posted) copy of an offer. */
export interface SessionOfferRecord extends SessionKey {
  id: number;
  chatRef: string;
  messageRef: string | null;
  buttonToken: string;
  status: 'open' | 'decided' | 'stale';
  decision: string | null;
  decidedBy: string | null;
  decidedAt: number | null;
  createdAt: number;
}

/** Reads and writes `session_offers`. */
export class SessionOffersRepo {
  readonly #db: Kysely<Database>;
  readonly #now: Clock;

  constructor(db: Kysely<Database>, opts: RepoOptions = {}) {
    this.#db = db;
    this.#now = opts.now ?? Date.now;
  }

  /** Stores a copy before it is sent (a press racing the send finds its token); then `setMessageRef`. */
  async add(key: SessionKey, chatRef: string): Promise<SessionOfferRecord> {
    const now = this.#now();
    const row = await this.#db
      .insertInto('session_offers')
      .values({
        workspace: key.workspace,
        kind: key.kind,
        session: key.session,
        session_state: key.state,
        chat_ref: chatRef,
        button_token: newButtonToken(),
        created_at: now,
        updated_at: now,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return toRecord(row);
  }

  /** Records the platform's reference of a sent copy. */
  async setMessageRef(id: number, messageRef: string): Promise<void> {
    await this.#db
      .updateTable('session_offers')
      .set({ message_ref: messageRef, updated_at: this.#now() })
      .where('id', '=', id)
      .execute();
  }

  /** Whether the copy's send still waits in the outbox (the confirmation will record its ref). */
  async sendInFlight(id: number): Promise<boolean> {
    return sendInFlightFor(this.#db, 'offer', id);
  }

  /** Removes a copy that was never sent (its chat refused it). */
  async removeUnsent(id: number): Promise<void> {
    await this.#db
      .deleteFrom('session_offers')
      .where('id', '=', id)
      .where('message_ref', 'is', null)
      .execute();
  }

  /** The copy whose buttons carry `token`, or null. */
  async findByToken(token: string): Promise<SessionOfferRecord | null> {
    const row = await this.#db
      .selectFrom('session_offers')
      .selectAll()
      .where('button_token', '=', token)
      .executeTakeFirst();
    return row ? toRecord(row) : null;
  }

  /** Every copy of an offer (all chats), oldest first. */
  async copies(key: SessionKey): Promise<SessionOfferRecord[]> {
    const rows = await this.#db
      .selectFrom('session_offers')
      .selectAll()
      .where('workspace', '=', key.workspace)
      .where('kind', '=', key.kind)
      .where('session', '=', key.session)
      .where('session_state', '=', key.state)
      .orderBy('id')
      .execute();
    return rows.map(toRecord);
  }

  /** The latest decided copy of a session in any state (who chose what, when), or null. */
  async lastDecision(key: Omit<SessionKey, 'state'>): Promise<SessionOfferRecord | null> {
    const row = await this.#db
      .selectFrom('session_offers')
      .selectAll()
      .where('workspace', '=', key.workspace)
      .where('kind', '=', key.kind)
      .where('session', '=', key.session)
      .where('status', '=', 'decided')
      .orderBy('decided_at', 'desc')
      .executeTakeFirst();
    return row ? toRecord(row) : null;
  }

  /** Closes every open copy with the choice; true only for the call that closed them. */
  async decide(key: SessionKey, decision: string, by: string): Promise<boolean> {
    const now = this.#now();
    const r = await this.#db
      .updateTable('session_offers')
      .set({ status: 'decided', decision, decided_by: by, decided_at: now, updated_at: now })
      .where('workspace', '=', key.workspace)
      .where('kind', '=', key.kind)
      .where('session', '=', key.session)
      .where('session_state', '=', key.state)
      .where('status', '=', 'open')
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  /** Reopens the copies of a choice that could not be applied (it failed: choose again). */
  async reopen(key: SessionKey): Promise<void> {
    await this.#db
      .updateTable('session_offers')
      .set({ status: 'open', decision: null, decided_by: null, decided_at: null })
      .where('workspace', '=', key.workspace)
      .where('kind', '=', key.kind)
      .where('session', '=', key.session)
      .where('session_state', '=', key.state)
      .where('status', '=', 'decided')
      .execute();
  }

  /** Marks the open copies of an offer stale (the session moved on or is gone). */
  async markStale(key: SessionKey): Promise<void> {
    await this.#db
      .updateTable('session_offers')
      .set({ status: 'stale', updated_at: this.#now() })
      .where('workspace', '=', key.workspace)
      .where('kind', '=', key.kind)
      .where('session', '=', key.session)
      .where('session_state', '=', key.state)
      .where('status', '=', 'open')
      .execute();
  }
}

function toRecord(row: Row<'session_offers'>): SessionOfferRecord {
  return {
    id: row.id,
    workspace: row.workspace,
    kind: row.kind,
    session: row.session,
    state: row.session_state,
    chatRef: row.chat_ref,
    messageRef: row.message_ref,
    buttonToken: row.button_token,
    status: row.status,
    decision: row.decision,
    decidedBy: row.decided_by,
    decidedAt: row.decided_at,
    createdAt: row.created_at,
  };
}
