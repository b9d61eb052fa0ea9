/**
 * Chat messages offering an interrupted session as Resume / Restart / Abort (`session_offers`).
 * An offer is keyed by workspace, kind, session and the state it was offered in; each copy (one
 * per chat, or per `sessions` command) has its own button token. `decide` closes every open
 * copy of the key at once and says whether this call did it, so a choice is applied once.
 * A choice keeps the press's idempotency key until its outcome is recorded, and a closed copy is
 * `decision_shown = 0` until its edit is confirmed: the next process finishes what a kill left
 * (issue 39).
 */
import { type Kysely, sql } from 'kysely';
import { dialectOf } from '../dialects/index.ts';
import type { Database, Row } from '../schema.ts';
import { newButtonToken } from './checkpoint-messages.ts';
import { type Clock, type RepoOptions, sendAttemptedTwice, sendInFlightFor } from './support.ts';

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
  /** The phasebridge run behind the session, when known. */
  runId: string | null;
  /** The choosing press's idempotency key, while its outcome is not recorded (else kept). */
  decisionKey: string | null;
  /** The chat the choice was made in. */
  decidedIn: string | null;
  /** What the choice did (or why the offer closed), once known. */
  outcome: string | null;
  /** The message shows the closing (meaningful once closed). */
  decisionShown: boolean;
  /** The copy whose send this message repeats, or null. */
  repeatOf: number | null;
}

/** How a choice was made: the press's key (engine commands are keyed by it) and its chat. */
export interface ChoiceMade {
  key: string;
  chat: string;
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
  async add(key: SessionKey, chatRef: string, runId?: string): Promise<SessionOfferRecord> {
    const now = this.#now();
    const row = await this.#db
      .insertInto('session_offers')
      .values({
        workspace: key.workspace,
        kind: key.kind,
        session: key.session,
        session_state: key.state,
        chat_ref: chatRef,
        run_id: runId ?? null,
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

  /** Whether the copy's send was handed to the platform twice (a restart resent it). */
  async sendAttemptedTwice(id: number): Promise<boolean> {
    return sendAttemptedTwice(this.#db, 'offer', id);
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

  /**
   * Closes every open copy with the choice; true only for the call that closed them. The
   * choice is not applied until `applied` records its outcome.
   */
  async decide(key: SessionKey, decision: string, by: string, made: ChoiceMade): Promise<boolean> {
    const now = this.#now();
    const r = await this.#db
      .updateTable('session_offers')
      .set({
        status: 'decided',
        decision,
        decided_by: by,
        decided_at: now,
        decision_key: made.key,
        decided_in: made.chat,
        outcome: null,
        decision_shown: 0,
        updated_at: now,
      })
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
      .set({
        status: 'open',
        decision: null,
        decided_by: null,
        decided_at: null,
        decision_key: null,
        decided_in: null,
        outcome: null,
      })
      .where('workspace', '=', key.workspace)
      .where('kind', '=', key.kind)
      .where('session', '=', key.session)
      .where('session_state', '=', key.state)
      .where('status', '=', 'decided')
      .execute();
  }

  /** Records what the choice did: applied, never to be applied again. */
  async applied(key: SessionKey, outcome: string): Promise<void> {
    await this.#ofKey(key)
      .set({ outcome, updated_at: this.#now() })
      .where('status', '=', 'decided')
      .where('outcome', 'is', null)
      .execute();
  }

  /** Copies decided by a process that died before the choice's outcome was recorded. */
  async unapplied(): Promise<SessionOfferRecord[]> {
    const rows = await this.#db
      .selectFrom('session_offers')
      .selectAll()
      .where('status', '=', 'decided')
      .where('outcome', 'is', null)
      .where('decision_key', 'is not', null)
      .orderBy('id')
      .execute();
    return rows.map(toRecord);
  }

  /** Marks the open copies of an offer stale (the session moved on or is gone), with why. */
  async markStale(key: SessionKey, outcome?: string): Promise<void> {
    await this.#ofKey(key)
      .set({
        status: 'stale',
        outcome: outcome ?? null,
        decision_shown: 0,
        updated_at: this.#now(),
      })
      .where('status', '=', 'open')
      .execute();
  }

  /**
   * Marks stale the open copies in `chatRef` of the same session offered in another state (a
   * newer offer replaces them); the ones marked.
   */
  async supersede(key: SessionKey, chatRef: string, outcome: string): Promise<number> {
    const r = await this.#db
      .updateTable('session_offers')
      .set({ status: 'stale', outcome, decision_shown: 0, updated_at: this.#now() })
      .where('workspace', '=', key.workspace)
      .where('kind', '=', key.kind)
      .where('session', '=', key.session)
      .where('session_state', '<>', key.state)
      .where('chat_ref', '=', chatRef)
      .where('status', '=', 'open')
      .executeTakeFirst();
    return Number(r.numUpdatedRows);
  }

  /**
   * Closed copies whose message does not show it yet, each with whether a call of it (its send,
   * or its closing edit) still waits in the outbox (its confirmation will tell).
   */
  async unshown(): Promise<(SessionOfferRecord & { inFlight: boolean })[]> {
    const { jsonText, asText } = dialectOf(this.#db);
    const owner = sql.ref('o.owner_json');
    const rows = await this.#db
      .selectFrom('session_offers as s')
      .selectAll('s')
      .select(
        sql<
          number | boolean
        >`exists (select 1 from outbox o where o.state in ('pending', 'attempted')
          and ${jsonText(owner, 'id')} = ${asText(sql.ref('s.id'))}
          and ${jsonText(owner, 'kind')} in ('offer', 'offerClosed'))`.as('in_flight'),
      )
      .where('s.status', '<>', 'open')
      .where('s.decision_shown', '=', 0)
      .orderBy('s.id')
      .execute();
    // SQLite answers 0/1, Postgres a boolean.
    return rows.map((r) => ({
      ...toRecord(r),
      inFlight: r.in_flight === 1 || r.in_flight === true,
    }));
  }

  /** The copy's message shows its closing (or never will: it could not be delivered). */
  async markShown(id: number): Promise<void> {
    await this.#db
      .updateTable('session_offers')
      .set({ decision_shown: 1, updated_at: this.#now() })
      .where('id', '=', id)
      .execute();
  }

  /** The copy with id `id`, or null. */
  async get(id: number): Promise<SessionOfferRecord | null> {
    const row = await this.#db
      .selectFrom('session_offers')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirst();
    return row ? toRecord(row) : null;
  }

  /**
   * Keeps `messageRef`, a second message of copy `of`'s send (buttonless since), as a copy of
   * the same offer, so its closing is shown there too; none when that message is known already.
   */
  async addRepeat(of: SessionOfferRecord, messageRef: string): Promise<void> {
    const known = await this.#db
      .selectFrom('session_offers')
      .select('id')
      .where('message_ref', '=', messageRef)
      .executeTakeFirst();
    if (known) return;
    const now = this.#now();
    await this.#db
      .insertInto('session_offers')
      .values({
        workspace: of.workspace,
        kind: of.kind,
        session: of.session,
        session_state: of.state,
        chat_ref: of.chatRef,
        message_ref: messageRef,
        // Never on a button: the repeat's buttons were taken off.
        button_token: newButtonToken(),
        status: of.status,
        decision: of.decision,
        decided_by: of.decidedBy,
        decided_at: of.decidedAt,
        run_id: of.runId,
        decision_key: of.decisionKey,
        decided_in: of.decidedIn,
        outcome: of.outcome,
        decision_shown: of.status === 'open' ? 1 : 0,
        repeat_of: of.id,
        created_at: now,
        updated_at: now,
      })
      .execute();
  }

  #ofKey(key: SessionKey) {
    return this.#db
      .updateTable('session_offers')
      .where('workspace', '=', key.workspace)
      .where('kind', '=', key.kind)
      .where('session', '=', key.session)
      .where('session_state', '=', key.state);
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
    runId: row.run_id,
    decisionKey: row.decision_key,
    decidedIn: row.decided_in,
    outcome: row.outcome,
    decisionShown: row.decision_shown === 1,
    repeatOf: row.repeat_of,
  };
}
