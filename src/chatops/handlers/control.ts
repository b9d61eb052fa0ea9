/** `cancel`, `resume`, `skip`, `retry`, `reopen` and `revert`: steering a run through the engine. */
import { layoutModule } from '../../engine/layouts/index.ts';
import type { ParsedCommand } from '../grammar.ts';
import type { CommandInput } from '../ports.ts';
import { type CommandContext, type HandlerResult, visibleRun, warningLines } from './types.ts';

type Control = Extract<
  ParsedCommand,
  { verb: 'cancel' | 'skip' | 'resume' | 'retry' | 'reopen' | 'revert' }
>;

const DONE: Readonly<Record<Control['verb'], string>> = {
  cancel: 'Cancelled',
  resume: 'Resumed',
  skip: 'Skipped the current step of',
  retry: 'Retrying the failed step of',
  reopen: 'Re-opened the expired checkpoint of',
  revert: 'Reverted',
};

/** Commits the verb's engine command under the event's idempotency key; the engine's refusal is the reply. */
export async function controlCommand(ctx: CommandContext, cmd: Control): Promise<HandlerResult> {
  await visibleRun(ctx, cmd.runId);
  const blocked = await blockedNote(ctx, cmd);
  const result = await ctx.deps.orchestrator.command(
    cmd.runId,
    ctx.event.idempotencyKey,
    engineCommand(ctx, cmd),
  );
  if (!result.ok) {
    const why = result.rejection.message;
    return {
      outcome: 'failed',
      target: cmd.runId,
      detail: why,
      reply: `Could not ${cmd.verb}: ${why}`,
    };
  }
  const to = cmd.verb === 'revert' ? ` to step ${cmd.stepId}` : '';
  return {
    outcome: 'allowed',
    target: cmd.runId,
    reply: `${DONE[cmd.verb]} run ${cmd.runId}${to}.${blocked}${warningLines(result.warnings)}`,
  };
}

/**
 * For resume and retry of a blocked run whose layout asks for it (flow's iron law: a blocked run
 * is never resumed without its reason being shown): its blocked reason, said before it goes on.
 */
async function blockedNote(ctx: CommandContext, cmd: Control): Promise<string> {
  if (cmd.verb !== 'resume' && cmd.verb !== 'retry') return '';
  const state = await ctx.deps.orchestrator.getRun(cmd.runId);
  // Other layouts announce the block when it happens; flow's law asks for it at the resume too.
  if (state.status !== 'blocked') return '';
  if (layoutModule(state.layout)?.words?.blockedReasonOnResume !== true) return '';
  return `\nIt was blocked: ${state.blocked?.reason ?? 'no reason recorded'}`;
}

function engineCommand(ctx: CommandContext, cmd: Control): CommandInput {
  const actor = ctx.access.actor;
  switch (cmd.verb) {
    case 'cancel':
      return { type: 'cancel', actor, ...(cmd.reason !== undefined && { reason: cmd.reason }) };
    case 'skip':
      return { type: 'skip', actor, ...(cmd.reason !== undefined && { reason: cmd.reason }) };
    case 'resume':
      return { type: 'resume', actor };
    case 'retry':
      return { type: 'retry', actor };
    case 'reopen':
      return { type: 'reopenCheckpoint', actor };
    case 'revert':
      return { type: 'revert', actor, toStepId: cmd.stepId, source: 'command' };
  }
}
