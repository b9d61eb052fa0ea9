/** Per run and chat, the status message the notifier edits in place (also after a restart). */
import type { Kysely } from 'kysely';
import { dialectOf } from '../dialects/index.ts';
import type { Database } from '../schema.ts';
import { type Clock, isMessageOrPart, type RepoOptions } from './support.ts';

/** Reads and writes `status_messages`. */
export class StatusMessagesRepo {
  readonly #db: Kysely<Database>;
  readonly #now: Clock;

  constructor(db: Kysely<Database>, opts: RepoOptions = {}) {
    this.#db = db;
    this.#now = opts.now ?? Date.now;
  }

  /** The ref of the run's status message in a chat, or null when none was posted there. */
  async get(runId: string, chatRef: string): Promise<string | null> {
    const row = await this.#db
      .selectFrom('status_messages')
      .select('message_ref')
      .where('run_id', '=', runId)
      .where('chat_ref', '=', chatRef)
      .executeTakeFirst();
    return row?.message_ref ?? null;
  }

  /** Records (or replaces) the run's status message in a chat. */
  async set(runId: string, chatRef: string, messageRef: string): Promise<void> {
    const now = this.#now();
    await this.#db
      .insertInto('status_messages')
      .values({
        run_id: runId,
        chat_ref: chatRef,
        message_ref: messageRef,
        created_at: now,
        updated_at: now,
      })
      .onConflict((oc) =>
        oc
          .columns(['run_id', 'chat_ref'])
          .doUpdateSet({ message_ref: messageRef, updated_at: now }),
      )
      .execute();
  }

  /** The run whose status message this is (a reply to it is guidance), or null. */
  async runOfMessage(messageRef: string): Promise<string | null> {
    const row = await this.#db
      .selectFrom('status_messages')
      .select('run_id')
      .where(isMessageOrPart(dialectOf(this.#db), 'message_ref', messageRef))
      .executeTakeFirst();
    return row?.run_id ?? null;
  }

  /** Forgets the run's status message in a chat (the next update posts a new one). */
  async delete(runId: string, chatRef: string): Promise<void> {
    await this.#db
      .deleteFrom('status_messages')
      .where('run_id', '=', runId)
      .where('chat_ref', '=', chatRef)
      .execute();
  }

  /** The chats showing a status message of the run, oldest first. */
  async chatsOf(runId: string): Promise<string[]> {
    const rows = await this.#db
      .selectFrom('status_messages')
      .select('chat_ref')
      .where('run_id', '=', runId)
      .orderBy('created_at')
      .orderBy('chat_ref')
      .execute();
    return rows.map((r) => r.chat_ref);
  }

  /** Forgets every status message of a run (it ended); returns how many. */
  async deleteRun(runId: string): Promise<number> {
    const res = await this.#db
      .deleteFrom('status_messages')
      .where('run_id', '=', runId)
      .executeTakeFirst();
    return Number(res.numDeletedRows);
  }
}
