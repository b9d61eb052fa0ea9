/** `phase <run>`: a viewer reads a PABCD run's phase history (who moved it, when and why). */
import type { ParsedCommand } from '../grammar.ts';
import { phaseHistory } from '../phase-strip.ts';
import { type CommandContext, type HandlerResult, visibleRun } from './types.ts';

/** The phase strip and every phase move of a run this chat may see, oldest first. */
export async function phaseCommand(
  ctx: CommandContext,
  cmd: Extract<ParsedCommand, { verb: 'phase' }>,
): Promise<HandlerResult> {
  await visibleRun(ctx, cmd.runId);
  const state = await ctx.deps.orchestrator.getRun(cmd.runId);
  const reply = phaseHistory(state, ctx.deps.clock().getTime());
  return { outcome: 'allowed', target: cmd.runId, reply };
}
