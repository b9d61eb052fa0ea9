/**
 * The bot's other messages about a run (issue 29): its step answers, outcome, acknowledgements,
 * reason prompts and, once the run ended, its status messages. A reply to one of them is then
 * never silently dropped: it is a note while the run is alive, and answered when the run is
 * finished or the question it answered expired. Rows are kept RUN_MESSAGES_KEEP_MS.
 */
import type { Kysely } from 'kysely';
import { dialectOf } from '../dialects/index.ts';
import type { Database } from '../schema.ts';
import { type Clock, isMessageOrPart, type RepoOptions } from './support.ts';

/** What a recorded message is. */
export type RunMessageKind = 'answer' | 'outcome' | 'ack' | 'prompt' | 'status';

/** How long a run's message is remembered (a reply after that is chatter). */
export const RUN_MESSAGES_KEEP_MS = 30 * 24 * 60 * 60 * 1000;

const KINDS: ReadonlySet<string> = new Set(['answer', 'outcome', 'ack', 'prompt', 'status']);

/** One recorded message. */
export interface RunMessageRecord {
  runId: string;
  kind: RunMessageKind;
}

/** Reads and writes `run_messages`. */
export class RunMessagesRepo {
  readonly #db: Kysely<Database>;
  readonly #now: Clock;

  constructor(db: Kysely<Database>, opts: RepoOptions = {}) {
    this.#db = db;
    this.#now = opts.now ?? Date.now;
  }

  /** Records a message of a run; a message already recorded keeps its first record. */
  async add(messageRef: string, runId: string, kind: RunMessageKind): Promise<void> {
    await this.#db
      .insertInto('run_messages')
      .values({ message_ref: messageRef, run_id: runId, kind, created_at: this.#now() })
      .onConflict((oc) => oc.column('message_ref').doNothing())
      .execute();
  }

  /** The run and kind of a message (or of one part of a split one), or null. */
  async find(messageRef: string): Promise<RunMessageRecord | null> {
    const row = await this.#db
      .selectFrom('run_messages')
      .select(['run_id', 'kind'])
      .where(isMessageOrPart(dialectOf(this.#db), 'message_ref', messageRef))
      .executeTakeFirst();
    if (row === undefined) return null;
    // An unknown kind reads as an answer: a reply to it is still a note, never a decision.
    const kind = (KINDS.has(row.kind) ? row.kind : 'answer') as RunMessageKind;
    return { runId: row.run_id, kind };
  }

  /** Forgets messages recorded before `before` (ms); returns how many. */
  async deleteBefore(before: number): Promise<number> {
    const res = await this.#db
      .deleteFrom('run_messages')
      .where('created_at', '<', before)
      .executeTakeFirst();
    return Number(res.numDeletedRows);
  }
}
