/** `run`, `status`, `runs` and `workflows`: starting runs and looking at them. */
import type { OutgoingMessage } from '../../bridges/messages.ts';
import type { RunIndexRecord } from '../../db/repositories/index.ts';
import { isTerminal, type RunState, type RunStatus } from '../../engine/model.ts';
import type { ParsedCommand } from '../grammar.ts';
import { usageOf } from '../grammar.ts';
import { fetchInputs } from '../input-fetch.ts';
import type { CheckedInput } from '../input-files.ts';
import { renderStatus, statusLine } from '../status-message.ts';
import { fullAccessSteps } from '../step-permissions.ts';
import {
  bindingOf,
  type CommandContext,
  type HandlerResult,
  visibleRun,
  visibleRuns,
} from './types.ts';

type Run = Extract<ParsedCommand, { verb: 'run' }>;

/**
 * `run <workflow> [spec…]`: starts a run in the chat's workspace and makes this chat follow it
 * (its status message is the answer). Without a spec, the message replied to is the spec; when
 * the first word is not a workflow and the chat has a default workflow, all the text is the spec.
 */
export async function runCommand(ctx: CommandContext, cmd: Run): Promise<HandlerResult> {
  const binding = bindingOf(ctx);
  const { orchestrator } = ctx.deps;
  const known = new Set((await orchestrator.listWorkflows(binding.workspace)).map((w) => w.id));
  let workflow: string;
  let spec: string | undefined;
  if (cmd.first !== undefined && known.has(cmd.first)) {
    workflow = cmd.first;
    spec = cmd.rest;
  } else if (binding.defaultWorkflow !== null) {
    workflow = binding.defaultWorkflow;
    spec = cmd.text;
  } else if (cmd.first === undefined) {
    return { outcome: 'failed', detail: 'no workflow', reply: usageOf('run') };
  } else {
    const list = [...known].join(', ') || 'none';
    return {
      outcome: 'failed',
      detail: `unknown workflow ${cmd.first}`,
      reply: `Unknown workflow "${cmd.first}". Workflows here: ${list}.`,
    };
  }
  spec ??= ctx.event.replyToText;
  if (spec === undefined || spec.trim() === '') {
    return {
      outcome: 'failed',
      detail: 'no spec',
      reply: `A run needs a spec: \`run ${workflow} <spec…>\`, or reply to a message with \`run ${workflow}\`.`,
    };
  }
  const files = ctx.event.files ?? [];
  let inputs: CheckedInput[] | undefined;
  if (files.length > 0) {
    const got = await fetchInputs(ctx.deps, ctx.event.chatRef, files);
    if (typeof got === 'string') {
      return {
        outcome: 'failed',
        detail: 'attached file refused',
        reply: `Run not started: ${got}`,
      };
    }
    inputs = got;
  }
  const state = await orchestrator.startRun({
    workflow,
    workspace: binding.workspace,
    spec,
    actor: ctx.access.actor,
    originChat: ctx.event.chatRef,
    key: ctx.event.idempotencyKey,
    ...(inputs === undefined ? {} : { inputs }),
  });
  ctx.follow(state.id, ctx.event.chatRef);
  return { outcome: 'allowed', target: state.id, detail: `workflow ${workflow}` };
}

/** The steps the status marks "⚠ full access" (also when the named agent asks for it). */
const full = (ctx: CommandContext, state: RunState) => fullAccessSteps(ctx.deps.repos, state);

/** `status [run]`: a run's status, or this chat's active runs. */
export async function statusCommand(
  ctx: CommandContext,
  cmd: Extract<ParsedCommand, { verb: 'status' }>,
): Promise<HandlerResult> {
  const now = ctx.deps.clock().getTime();
  if (cmd.runId !== undefined) {
    await visibleRun(ctx, cmd.runId);
    const state = await ctx.deps.orchestrator.getRun(cmd.runId);
    return {
      outcome: 'allowed',
      target: cmd.runId,
      reply: snapshot(renderStatus(state, now, undefined, await full(ctx, state)), now),
    };
  }
  const active = (await visibleRuns(ctx)).filter((r) => !isTerminal(r.status as RunStatus));
  if (active.length === 0) return { outcome: 'allowed', reply: 'No active runs here.' };
  if (active.length === 1) {
    const state = await ctx.deps.orchestrator.getRun(active[0]!.id);
    const reply = snapshot(renderStatus(state, now, undefined, await full(ctx, state)), now);
    return { outcome: 'allowed', target: state.id, reply };
  }
  const lines = await Promise.all(
    active.slice(0, 10).map(async (r) => {
      const state = await ctx.deps.orchestrator.getRun(r.id);
      return `• ${r.id} (${r.workflowId}): ${statusLine(state)}`;
    }),
  );
  return { outcome: 'allowed', reply: [`${active.length} active runs:`, ...lines].join('\n') };
}

/**
 * A `status` answer is a snapshot: it says when it was taken, so nobody mistakes it for the
 * run's live status message (which is edited as the run moves).
 */
function snapshot(message: OutgoingMessage, now: number): OutgoingMessage {
  const at = `${new Date(now).toISOString().slice(0, 19).replace('T', ' ')} UTC`;
  const field = { label: 'Snapshot', value: `as of ${at}; not updated (the status message is)` };
  return { ...message, fields: [...(message.fields ?? []), field] };
}

/** `runs`: this chat's ten most recent runs. */
export async function runsCommand(ctx: CommandContext): Promise<HandlerResult> {
  return { outcome: 'allowed', reply: runsReply(await visibleRuns(ctx, { limit: 10 })) };
}

/** The `runs` answer: one line per run, newest first. */
export function runsReply(runs: readonly Pick<RunIndexRecord, 'id' | 'workflowId' | 'status'>[]) {
  if (runs.length === 0) return 'No runs here yet.';
  return ['Recent runs:', ...runs.map((r) => `• ${r.id} (${r.workflowId}): ${r.status}`)].join(
    '\n',
  );
}

/** `workflows`: the workflows usable in this chat's workspace. */
export async function workflowsCommand(ctx: CommandContext): Promise<HandlerResult> {
  const binding = bindingOf(ctx);
  const list = await ctx.deps.orchestrator.listWorkflows(binding.workspace);
  if (list.length === 0) return { outcome: 'allowed', reply: 'No workflows here.' };
  const lines = list.map((w) => {
    const about = w.description ?? w.name;
    const dflt = w.id === binding.defaultWorkflow ? ' (default)' : '';
    return `• ${w.id}${dflt}${about ? ` — ${about}` : ''}`;
  });
  return { outcome: 'allowed', reply: ['Workflows:', ...lines].join('\n') };
}
