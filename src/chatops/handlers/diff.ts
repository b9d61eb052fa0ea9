/**
 * `diff <run> [step]` and the checkpoint's Diff button (issue 36): a viewer gets a step's diff as
 * a file in the chat (a Telegram document, a Slack file, a Discord attachment), bounded to 1 MB
 * with a note when cut, its caption listing the files with +/-. It changes nothing.
 */
import type { ChatRef } from '../../bridges/messages.ts';
import type { RunState, StepState } from '../../engine/model.ts';
import { NotFoundError } from '../../errors.ts';
import { type ChatOpsDeps, channelFor, runLink } from '../context.ts';
import type { ParsedCommand } from '../grammar.ts';
import { diffCaption, readStepDiff } from '../step-diff.ts';
import { type CommandContext, type HandlerResult, visibleRun } from './types.ts';

/** The step a `diff` names, else the open checkpoint's, else the latest that ran. */
function stepOf(state: RunState, stepId: string | undefined): StepState {
  const named = stepId ?? state.checkpoint?.stepId;
  if (named !== undefined) {
    const step = state.steps.find((s) => s.id === named);
    if (!step) throw new NotFoundError(`run ${state.id} has no step ${named}`);
    return step;
  }
  const step = state.steps.findLast((s) => s.attempt > 0);
  if (!step) throw new NotFoundError(`no step of run ${state.id} has run yet`);
  return step;
}

/**
 * Sends the step's diff as a file to `chatRef` itself (not a thread: Discord would open one on
 * the checkpoint, where the chat does not see it); returns what to tell the person who asked.
 */
export async function sendStepDiff(
  deps: ChatOpsDeps,
  chatRef: ChatRef,
  state: RunState,
  step: StepState,
): Promise<{ sent: boolean; text: string }> {
  const diff = readStepDiff(state, step);
  if (typeof diff === 'string') return { sent: false, text: capital(diff) };
  const channel = channelFor(deps, chatRef);
  if (!channel?.capabilities.files) {
    const where = runLink(deps, state.id, step.id, step.attempt);
    return { sent: false, text: `This chat does not take files: the diff is at ${where}` };
  }
  await channel.sendFile(chatRef, {
    name: diff.name,
    data: diff.data,
    caption: diffCaption(state, step, diff),
  });
  const cut = diff.cut ? ' (cut at 1 MB)' : '';
  return {
    sent: true,
    text: `The diff of ${step.id}, attempt ${diff.attempt}, is attached${cut}.`,
  };
}

/** Sends a step's diff to the chat as a file. */
export async function diffCommand(
  ctx: CommandContext,
  cmd: Extract<ParsedCommand, { verb: 'diff' }>,
): Promise<HandlerResult> {
  await visibleRun(ctx, cmd.runId);
  const state = await ctx.deps.orchestrator.getRun(cmd.runId);
  const step = stepOf(state, cmd.stepId);
  const result = await sendStepDiff(ctx.deps, ctx.event.chatRef, state, step);
  const base = { target: state.id, detail: `${step.id}#${step.attempt}` };
  if (!result.sent) return { ...base, outcome: 'failed', reply: result.text };
  return { ...base, outcome: 'allowed' };
}

const capital = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1);
