/** Chats a platform refuses us in (`unreachable_chats`): marked on a refusal, cleared on a retry. */
import type { Kysely } from 'kysely';
import type { Database } from '../schema.ts';
import type { Clock, RepoOptions } from './support.ts';

/** One unreachable chat. */
export interface UnreachableChat {
  readonly chatRef: string;
  readonly reason: string;
  readonly detail: string;
  /** When the refusal was first met (ms). */
  readonly since: number;
}

/** Reads and writes `unreachable_chats`. */
export class UnreachableChatsRepo {
  readonly #db: Kysely<Database>;
  readonly #now: Clock;

  constructor(db: Kysely<Database>, opts: RepoOptions = {}) {
    this.#db = db;
    this.#now = opts.now ?? Date.now;
  }

  /** Marks a chat unreachable; true only when it was not marked already (tell people once). */
  async mark(chatRef: string, reason: string, detail: string): Promise<boolean> {
    const now = this.#now();
    const r = await this.#db
      .insertInto('unreachable_chats')
      .values({ chat_ref: chatRef, reason, detail, since: now, updated_at: now })
      .onConflict((oc) => oc.column('chat_ref').doNothing())
      .executeTakeFirst();
    return Number(r.numInsertedOrUpdatedRows ?? 0) > 0;
  }

  /** Clears the mark (the chat is tried again); false when it was not marked. */
  async clear(chatRef: string): Promise<boolean> {
    const r = await this.#db
      .deleteFrom('unreachable_chats')
      .where('chat_ref', '=', chatRef)
      .executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }

  /** The mark of one chat, or null. */
  async get(chatRef: string): Promise<UnreachableChat | null> {
    const row = await this.#db
      .selectFrom('unreachable_chats')
      .selectAll()
      .where('chat_ref', '=', chatRef)
      .executeTakeFirst();
    return row ? toRecord(row) : null;
  }

  /** Every unreachable chat, oldest refusal first. */
  async list(): Promise<UnreachableChat[]> {
    const rows = await this.#db
      .selectFrom('unreachable_chats')
      .selectAll()
      .orderBy('since')
      .orderBy('chat_ref')
      .execute();
    return rows.map(toRecord);
  }
}

function toRecord(r: {
  chat_ref: string;
  reason: string;
  detail: string;
  since: number;
}): UnreachableChat {
  return { chatRef: r.chat_ref, reason: r.reason, detail: r.detail, since: r.since };
}
