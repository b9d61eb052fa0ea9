/**
 * `prompt <run> [step]` (issue 29): a viewer reads exactly what an attempt's agent was given —
 * the step's prompt with the reasons, notes and comments people added. The step's latest
 * attempt (default: the run's latest step that ran); a long prompt comes as a file where the
 * platform takes files, else its start with where the rest is.
 */
import fs from 'node:fs';
import { code, plain, rich } from '../../bridges/render-text.ts';
import { openInside } from '../../engine/ledger/safe-path.ts';
import type { RunState, StepState } from '../../engine/model.ts';
import { promptFileBeside } from '../../engine/prompt-file.ts';
import { NotFoundError } from '../../errors.ts';
import { channelFor } from '../context.ts';
import type { ParsedCommand } from '../grammar.ts';
import { type CommandContext, type HandlerResult, visibleRun } from './types.ts';

/** Longest prompt shown in a message; a longer one is sent as a file. */
export const PROMPT_MAX_CHARS = 3000;
/** Most bytes of a prompt file read. */
const MAX_BYTES = 1024 * 1024;

function stepOf(state: RunState, stepId: string | undefined): StepState {
  if (stepId !== undefined) {
    const step = state.steps.find((s) => s.id === stepId);
    if (!step) throw new NotFoundError(`run ${state.id} has no step ${stepId}`);
    if (step.attempt === 0) throw new NotFoundError(`step ${step.id} has not run yet`);
    return step;
  }
  const current = state.steps[state.cursor];
  const step =
    current && current.attempt > 0 ? current : state.steps.findLast((s) => s.attempt > 0);
  if (!step) throw new NotFoundError(`no step of run ${state.id} has run yet`);
  return step;
}

/** The prompt file's text; undefined when missing or refused (a planted link). */
function readPrompt(workspace: string, file: string): string | undefined {
  let fd: number | undefined;
  try {
    fd = openInside(workspace, file, fs.constants.O_RDONLY);
    const buf = Buffer.alloc(Math.min(fs.fstatSync(fd).size, MAX_BYTES));
    return buf.subarray(0, fs.readSync(fd, buf, 0, buf.length, 0)).toString('utf8');
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/** Shows the prompt of a step's latest attempt. */
export async function promptCommand(
  ctx: CommandContext,
  cmd: Extract<ParsedCommand, { verb: 'prompt' }>,
): Promise<HandlerResult> {
  await visibleRun(ctx, cmd.runId);
  const state = await ctx.deps.orchestrator.getRun(cmd.runId);
  const step = stepOf(state, cmd.stepId);
  const log = await ctx.deps.orchestrator.logPath(state.id, step.id, step.attempt);
  const prompt = readPrompt(state.workspace, promptFileBeside(log, step.id, step.attempt));
  const head = `Prompt of ${step.id}, attempt ${step.attempt} — run ${state.id}`;
  const base = {
    outcome: 'allowed' as const,
    target: state.id,
    detail: `${step.id}#${step.attempt}`,
  };
  if (prompt === undefined) {
    return {
      ...base,
      reply: `${head}: none on record (the attempt ran before prompts were kept).`,
    };
  }
  // A code block: the prompt's own markup is shown as written, not rendered.
  if (prompt.length <= PROMPT_MAX_CHARS) {
    return { ...base, reply: { text: rich(plain(`${head}:\n`), code(prompt)) } };
  }
  const channel = channelFor(ctx.deps, ctx.event.chatRef);
  if (channel?.capabilities.files) {
    await channel.sendFile(ctx.event.chatRef, {
      name: `prompt-${step.id}-${step.attempt}.md`,
      data: new TextEncoder().encode(prompt),
      caption: rich(plain(`${head} (${prompt.length} characters): attached.`)),
    });
    return base;
  }
  const cut = `${prompt.slice(0, PROMPT_MAX_CHARS - 1)}…`;
  const rest = `\n(cut: phasebridge logs ${state.id} ${step.id} --prompt prints all of it)`;
  return { ...base, reply: { text: rich(plain(`${head}:\n`), code(cut), plain(rest)) } };
}
