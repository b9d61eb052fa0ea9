/**
 * `approve [run] [reason]`, `reject [run] <reason>` and `changes [run] <reason>` (alias `loop`)
 * typed as commands. Without a run id they
 * act on the chat's single open checkpoint; with several open, the chat is asked to name one.
 */
import type { CheckpointState } from '../../engine/model.ts';
import { voteResultWords } from '../checkpoint-message.ts';
import { checkDigest } from '../digest-check.ts';
import type { ParsedCommand } from '../grammar.ts';
import { findCheckpoint } from '../presenter.ts';
import {
  type CommandContext,
  type HandlerResult,
  visibleRun,
  visibleRuns,
  warningLines,
} from './types.ts';

type Answer = Extract<ParsedCommand, { verb: 'approve' | 'reject' | 'changes' }>;

/** Votes on the open checkpoint of the named run, or of the chat's only awaiting run. */
export async function answerCommand(ctx: CommandContext, cmd: Answer): Promise<HandlerResult> {
  const target = await targetOf(ctx, cmd.runId);
  if ('outcome' in target) return target;
  const { runId, checkpoint } = target;
  const answer = cmd.verb;
  // A typed approve is bound to the content as a press is (see digest-check.ts).
  const bound =
    answer === 'approve'
      ? await checkDigest(ctx.deps, await ctx.deps.orchestrator.getRun(runId), checkpoint)
      : undefined;
  if (bound?.ok === false) {
    return { outcome: 'refused', target: runId, detail: bound.text, reply: bound.text };
  }
  const digest = bound?.digest;
  const base = {
    checkpointId: checkpoint.id,
    actor: ctx.access.actor,
    ...(digest !== undefined && { digest }),
  };
  const result = await ctx.deps.orchestrator.command(
    runId,
    ctx.event.idempotencyKey,
    cmd.verb === 'changes'
      ? { ...base, type: 'requestChanges', reason: cmd.reason }
      : {
          ...base,
          type: 'answerCheckpoint',
          answer: cmd.verb,
          ...(cmd.reason !== undefined && { reason: cmd.reason }),
        },
  );
  if (!result.ok) {
    const why = result.rejection.message;
    const what = answer === 'changes' ? 'request changes' : answer;
    return { outcome: 'failed', target: runId, detail: why, reply: `Could not ${what}: ${why}` };
  }
  const after = findCheckpoint(result.state, checkpoint.id) ?? checkpoint;
  const words = voteResultWords(after);
  return {
    outcome: 'allowed',
    target: runId,
    detail: `${answer} ${checkpoint.id}${bound === undefined ? '' : ` (content ${bound.label}, sha256 ${bound.digest})`}`,
    reply: `Checkpoint ${checkpoint.id} of run ${runId}: ${words}.${warningLines(result.warnings)}`,
  };
}

type Target = { runId: string; checkpoint: CheckpointState } | HandlerResult;

async function targetOf(ctx: CommandContext, runId: string | undefined): Promise<Target> {
  const { orchestrator } = ctx.deps;
  if (runId !== undefined) {
    await visibleRun(ctx, runId);
    const state = await orchestrator.getRun(runId);
    if (state.checkpoint === null) {
      const reply = `Run ${runId} has no open checkpoint (it is ${state.status}).`;
      return { outcome: 'failed', target: runId, detail: 'no open checkpoint', reply };
    }
    return { runId, checkpoint: state.checkpoint };
  }
  const awaiting = await visibleRuns(ctx, { status: 'awaiting' });
  const open: { runId: string; checkpoint: CheckpointState }[] = [];
  for (const r of awaiting) {
    const state = await orchestrator.getRun(r.id);
    if (state.checkpoint) open.push({ runId: r.id, checkpoint: state.checkpoint });
  }
  if (open.length === 1) return open[0]!;
  if (open.length === 0) {
    return { outcome: 'failed', detail: 'no open checkpoint', reply: 'No open checkpoint here.' };
  }
  const lines = open.map(
    (o) => `• ${o.runId}: checkpoint ${o.checkpoint.id} (${o.checkpoint.reason})`,
  );
  const reply = [`${open.length} open checkpoints here; name the run:`, ...lines].join('\n');
  return { outcome: 'failed', detail: 'several open checkpoints', reply };
}
