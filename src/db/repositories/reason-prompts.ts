/** Rejects and change requests waiting for their reason, approvals for their comment: the prompt and its presser name the run and checkpoint. */
import type { Kysely } from 'kysely';
import type { Database, Row } from '../schema.ts';
import type { RepoOptions } from './support.ts';

/** One open reason prompt. */
export interface ReasonPromptRecord {
  /** The prompt message (or modal) the reason answers, as the channel returned it. */
  promptRef: string;
  platform: string;
  userId: string;
  runId: string;
  checkpointId: string;
  /** The answer the text completes: 'reject', 'loop' (Request changes), or 'approve' (its comment). */
  answer: 'reject' | 'loop' | 'approve';
  askedAt: number;
  expiresAt: number;
}

/** Reads and writes `reason_prompts`. */
export class ReasonPromptsRepo {
  readonly #db: Kysely<Database>;

  constructor(db: Kysely<Database>, _opts: RepoOptions = {}) {
    this.#db = db;
  }

  /** Opens a prompt; the same prompt and user asked again replace the earlier ask. */
  async add(p: ReasonPromptRecord): Promise<void> {
    const row = {
      prompt_ref: p.promptRef,
      platform: p.platform,
      user_id: p.userId,
      run_id: p.runId,
      checkpoint_id: p.checkpointId,
      answer: p.answer,
      asked_at: p.askedAt,
      expires_at: p.expiresAt,
    };
    await this.#db
      .insertInto('reason_prompts')
      .values(row)
      .onConflict((oc) => oc.columns(['prompt_ref', 'platform', 'user_id']).doUpdateSet(row))
      .execute();
  }

  /**
   * The user's open prompt, or null (unknown, answered, or expired at `now`), left open: the
   * answer's handler closes it with `take` once the answer is handled, so a process that dies
   * in between leaves it for the same answer delivered again.
   */
  async find(
    promptRef: string,
    platform: string,
    userId: string,
    now: number,
  ): Promise<ReasonPromptRecord | null> {
    const row = await this.#db
      .selectFrom('reason_prompts')
      .selectAll()
      .where('prompt_ref', '=', promptRef)
      .where('platform', '=', platform)
      .where('user_id', '=', userId)
      .where('expires_at', '>', now)
      .executeTakeFirst();
    return row ? toRecord(row) : null;
  }

  /**
   * Closes the user's open prompt and returns it, or null (unknown, answered, or expired at
   * `now`). One DELETE claims it, so of two answers (even in two processes) only one gets it.
   */
  async take(
    promptRef: string,
    platform: string,
    userId: string,
    now: number,
  ): Promise<ReasonPromptRecord | null> {
    const row = await this.#db
      .deleteFrom('reason_prompts')
      .where('prompt_ref', '=', promptRef)
      .where('platform', '=', platform)
      .where('user_id', '=', userId)
      .where('expires_at', '>', now)
      .returningAll()
      .executeTakeFirst();
    return row ? toRecord(row) : null;
  }

  /**
   * Every prompt still kept for a prompt message, whoever it asks and expired or not (until
   * deleteExpired): what a reply that `take` did not match was answering.
   */
  async listByPrompt(promptRef: string): Promise<ReasonPromptRecord[]> {
    const rows = await this.#db
      .selectFrom('reason_prompts')
      .selectAll()
      .where('prompt_ref', '=', promptRef)
      .execute();
    return rows.map(toRecord);
  }

  /** Deletes prompts that expired before `now`; returns how many. */
  async deleteExpired(now: number): Promise<number> {
    const res = await this.#db
      .deleteFrom('reason_prompts')
      .where('expires_at', '<=', now)
      .executeTakeFirst();
    return Number(res.numDeletedRows);
  }
}

function toRecord(row: Row<'reason_prompts'>): ReasonPromptRecord {
  return {
    promptRef: row.prompt_ref,
    platform: row.platform,
    userId: row.user_id,
    runId: row.run_id,
    checkpointId: row.checkpoint_id,
    // Anything unknown stays a reject: it can never become an approval by accident.
    answer: row.answer === 'loop' || row.answer === 'approve' ? row.answer : 'reject',
    askedAt: row.asked_at,
    expiresAt: row.expires_at,
  };
}
