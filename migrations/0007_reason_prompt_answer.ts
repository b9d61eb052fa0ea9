/**
 * 0007_reason_prompt_answer: a reason prompt now serves Reject and Request changes (issue 12), so
 * it records which answer the typed reason completes. Earlier rows were all rejects.
 */
import type { Kysely } from 'kysely';

/** Adds `reason_prompts.answer` ('reject' | 'loop'), 'reject' for existing rows. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('reason_prompts')
    .addColumn('answer', 'text', (c) => c.notNull().defaultTo('reject'))
    .execute();
}

/** Removes what `up` added. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('reason_prompts').dropColumn('answer').execute();
}
