/** Chat messages that show a checkpoint, each with the opaque token its buttons carry. */
import { randomBytes } from 'node:crypto';
import { type Kysely, sql } from 'kysely';
import { NotFoundError } from '../../errors.ts';
import { dialectOf } from '../dialects/index.ts';
import type { CheckpointMessageState, Database, Row } from '../schema.ts';
import { withConstraintErrors } from '../sqlite-errors.ts';
import {
  type Clock,
  isMessageOrPart,
  quoted,
  type RepoOptions,
  sendAttemptedTwice,
  sendInFlightFor,
} from './support.ts';

/** One posted (or about to be posted) checkpoint message. */
export interface CheckpointMessageRecord {
  id: number;
  runId: string;
  checkpointId: string;
  chatRef: string;
  /** Null until the platform has answered the send. */
  messageRef: string | null;
  buttonToken: string;
  state: CheckpointMessageState;
  createdAt: number;
  updatedAt: number;
}

/** What `add` needs; the button token is generated when not given. */
export interface NewCheckpointMessage {
  runId: string;
  checkpointId: string;
  chatRef: string;
  messageRef?: string | null;
  buttonToken?: string;
}

/** A fresh unguessable token: 128 bits, 22 URL-safe characters (fits Telegram's 64-byte data). */
export function newButtonToken(): string {
  return randomBytes(16).toString('base64url');
}

/** Reads and writes `checkpoint_messages`. */
export class CheckpointMessagesRepo {
  readonly #db: Kysely<Database>;
  readonly #now: Clock;

  constructor(db: Kysely<Database>, opts: RepoOptions = {}) {
    this.#db = db;
    this.#now = opts.now ?? Date.now;
  }

  /**
   * Stores a message of a checkpoint in state 'open'. Store it BEFORE sending, so a press that
   * arrives right after the send finds its token; then `setMessageRef`.
   * ConflictError when the run is not indexed or the token is taken.
   */
  async add(msg: NewCheckpointMessage): Promise<CheckpointMessageRecord> {
    const now = this.#now();
    const row = await withConstraintErrors(
      `a message of checkpoint ${quoted(msg.checkpointId)}`,
      () =>
        this.#db
          .insertInto('checkpoint_messages')
          .values({
            run_id: msg.runId,
            checkpoint_id: msg.checkpointId,
            chat_ref: msg.chatRef,
            message_ref: msg.messageRef ?? null,
            button_token: msg.buttonToken ?? newButtonToken(),
            created_at: now,
            updated_at: now,
          })
          .returningAll()
          .executeTakeFirstOrThrow(),
      {
        unique: 'this button token is already in use',
        foreignKey: `run ${quoted(msg.runId)} is not in the run index`,
      },
    );
    return toRecord(row);
  }

  /** Records the platform's reference of a sent message; NotFoundError for an unknown id. */
  async setMessageRef(id: number, messageRef: string): Promise<CheckpointMessageRecord> {
    const row = await this.#db
      .updateTable('checkpoint_messages')
      .set({ message_ref: messageRef, updated_at: this.#now() })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirst();
    if (!row) throw new NotFoundError(`no checkpoint message ${id}`);
    return toRecord(row);
  }

  /** The run whose checkpoint message this is (a reply to it is guidance), or null. */
  async runOfMessage(messageRef: string): Promise<string | null> {
    const row = await this.#db
      .selectFrom('checkpoint_messages')
      .select('run_id')
      .where(isMessageOrPart(dialectOf(this.#db), 'message_ref', messageRef))
      .executeTakeFirst();
    return row?.run_id ?? null;
  }

  /** Whether the outbox still holds this copy's send (waiting or in flight): its ref will come. */
  async sendInFlight(id: number): Promise<boolean> {
    return sendInFlightFor(this.#db, 'checkpoint', id);
  }

  /**
   * Whether this copy's send may have reached its chat twice: the outbox attempted it more than
   * once (a kill between the platform's answer and the confirmation resends it, docs/outbox.md),
   * so a second message carrying the copy's buttons may exist that the bridge never learnt of.
   */
  async sendRepeated(id: number): Promise<boolean> {
    return sendAttemptedTwice(this.#db, 'checkpoint', id);
  }

  /** Removes a copy that was never sent (its chat refused it), so a later retry posts it. */
  async removeUnsent(id: number): Promise<boolean> {
    const r = await this.#db
      .deleteFrom('checkpoint_messages')
      .where('id', '=', id)
      .where('message_ref', 'is', null)
      .executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }

  /** One copy by id, or null. */
  async get(id: number): Promise<CheckpointMessageRecord | null> {
    const row = await this.#db
      .selectFrom('checkpoint_messages')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirst();
    return row ? toRecord(row) : null;
  }

  /** The message whose buttons carry `token`, or null. */
  async findByToken(token: string): Promise<CheckpointMessageRecord | null> {
    const row = await this.#db
      .selectFrom('checkpoint_messages')
      .selectAll()
      .where('button_token', '=', token)
      .executeTakeFirst();
    return row ? toRecord(row) : null;
  }

  /** Every copy of a checkpoint's message (all channels), oldest first. */
  async listByCheckpoint(runId: string, checkpointId: string): Promise<CheckpointMessageRecord[]> {
    const rows = await this.#db
      .selectFrom('checkpoint_messages')
      .selectAll()
      .where('run_id', '=', runId)
      .where('checkpoint_id', '=', checkpointId)
      .orderBy('id')
      .execute();
    return rows.map(toRecord);
  }

  /** Marks every open copy of a checkpoint's message decided; returns how many changed. */
  markDecided(runId: string, checkpointId: string): Promise<number> {
    return this.#close(runId, checkpointId, 'decided');
  }

  /** Every copy still open, oldest first (at start: their checkpoints may have closed meanwhile). */
  async listOpen(): Promise<CheckpointMessageRecord[]> {
    const rows = await this.#db
      .selectFrom('checkpoint_messages')
      .selectAll()
      .where('state', '=', 'open')
      .orderBy('id')
      .execute();
    return rows.map(toRecord);
  }

  /** Open message copies whose checkpoint id starts with `prefix` (no `%` or `_` in it; tool approvals: `tool:`). */
  async listOpenWithPrefix(prefix: string): Promise<CheckpointMessageRecord[]> {
    const rows = await this.#db
      .selectFrom('checkpoint_messages')
      .selectAll()
      .where('state', '=', 'open')
      .where('checkpoint_id', 'like', `${prefix}%`)
      .orderBy('id')
      .execute();
    return rows.map(toRecord);
  }

  /**
   * Closed copies whose message may still show live buttons (`decision_shown` 0: the decision's
   * edit never confirmed), oldest first, each with whether a call for it still waits in the
   * outbox (its confirmation will tell it: nothing to do yet).
   */
  async unshownDecisions(): Promise<(CheckpointMessageRecord & { inFlight: boolean })[]> {
    const { jsonText, asText } = dialectOf(this.#db);
    const owner = sql.ref('o.owner_json');
    const rows = await this.#db
      .selectFrom('checkpoint_messages as m')
      .selectAll('m')
      .select(
        sql<
          number | boolean
        >`exists (select 1 from outbox o where o.state in ('pending', 'attempted')
          and ${jsonText(owner, 'id')} = ${asText(sql.ref('m.id'))}
          and ${jsonText(owner, 'kind')} in ('checkpoint', 'decision'))`.as('in_flight'),
      )
      .where('m.state', '<>', 'open')
      .where('m.decision_shown', '=', 0)
      .orderBy('m.id')
      .execute();
    // SQLite answers 0/1, Postgres a boolean.
    return rows.map((r) => ({
      ...toRecord(r),
      inFlight: r.in_flight === 1 || r.in_flight === true,
    }));
  }

  /** The copy's message shows its decision (or it never will: superseded, not deliverable). */
  async markShown(id: number): Promise<void> {
    await this.#db
      .updateTable('checkpoint_messages')
      .set({ decision_shown: 1, updated_at: this.#now() })
      .where('id', '=', id)
      .execute();
  }

  /** Marks every open copy of a checkpoint's message expired; returns how many changed. */
  markExpired(runId: string, checkpointId: string): Promise<number> {
    return this.#close(runId, checkpointId, 'expired');
  }

  async #close(runId: string, checkpointId: string, state: 'decided' | 'expired'): Promise<number> {
    const res = await this.#db
      .updateTable('checkpoint_messages')
      .set({ state, updated_at: this.#now() })
      .where('run_id', '=', runId)
      .where('checkpoint_id', '=', checkpointId)
      .where('state', '=', 'open')
      .executeTakeFirst();
    return Number(res.numUpdatedRows);
  }
}

function toRecord(row: Row<'checkpoint_messages'>): CheckpointMessageRecord {
  return {
    id: row.id,
    runId: row.run_id,
    checkpointId: row.checkpoint_id,
    chatRef: row.chat_ref,
    messageRef: row.message_ref,
    buttonToken: row.button_token,
    state: row.state,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
