/**
 * A vote on a checkpoint from chat (a press, or the reason or comment typed after one), committed
 * through the orchestrator: the engine applies its rules (four-eyes, one vote per person).
 */
import type { CheckpointAnswer } from '../engine/model.ts';
import { voteResultWords } from './checkpoint-message.ts';
import type { Access, ChatOpsDeps } from './context.ts';
import { findCheckpoint } from './presenter.ts';

/** Commits `answer` on `checkpointId` as `access`'s actor; the words to answer it with. */
export async function voteOnCheckpoint(
  deps: ChatOpsDeps,
  access: Access,
  key: string,
  runId: string,
  checkpointId: string,
  answer: CheckpointAnswer,
  extra: { reason?: string; digest?: string | undefined } = {},
): Promise<{ ok: boolean; text: string }> {
  const { reason, digest } = extra;
  const base = { checkpointId, actor: access.actor, ...(digest !== undefined && { digest }) };
  const result = await deps.orchestrator.command(
    runId,
    key,
    answer === 'loop'
      ? { ...base, type: 'requestChanges', reason: reason ?? '' }
      : { ...base, type: 'answerCheckpoint', answer, ...(reason !== undefined && { reason }) },
  );
  if (!result.ok) return { ok: false, text: result.rejection.message };
  const cp = findCheckpoint(result.state, checkpointId);
  return { ok: true, text: cp ? voteResultWords(cp) : `${answer} recorded` };
}
