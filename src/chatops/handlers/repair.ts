/** `repair <run> [dry-run]`: an admin repairs a run's damaged files (see RunStore.repair). */
import { describeRepair, repairRun } from '../../jobs/orchestrator/repair-run.ts';
import type { ParsedCommand } from '../grammar.ts';
import { type CommandContext, type HandlerResult, visibleRun } from './types.ts';

/**
 * Says what is wrong with a run of this chat; unless dry-run, backs its files up, keeps the
 * ledger's longest valid prefix and rebuilds the projections. The runs index follows.
 */
export async function repairCommand(
  ctx: CommandContext,
  cmd: Extract<ParsedCommand, { verb: 'repair' }>,
): Promise<HandlerResult> {
  const run = await visibleRun(ctx, cmd.runId);
  const report = await repairRun({
    workspace: run.workspace,
    runId: run.id,
    dryRun: cmd.dryRun,
    agents: ctx.deps.repos.agents,
  });
  const lines = describeRepair(report, cmd.dryRun);
  const state = report.state;
  if (report.repaired && state !== null) {
    await ctx.deps.repos.runs.updateStatus(run.id, state.status, Date.parse(state.updatedAt));
    const step = state.steps[state.cursor];
    if (state.status === 'active' && (step?.status === 'queued' || step?.status === 'running')) {
      // The run was idle (no process held it), so this step's job is over or gone: recover it
      // as after a crash (queued again, or blocked for a human when the run does not resume).
      const r = await ctx.deps.orchestrator.command(run.id, `repair:${run.id}:${state.seq}`, {
        type: 'recoverInterrupted',
        actor: ctx.access.actor,
      });
      if (r.ok) {
        const again = r.state.status === 'active';
        lines.push(
          again
            ? `Step ${step.id} was in flight in the kept lines: it runs again.`
            : `Step ${step.id} was in flight in the kept lines: resume or retry the run.`,
        );
      }
    }
  }
  const outcome = report.refused === null ? 'allowed' : 'failed';
  const detail = cmd.dryRun
    ? `dry run: ${report.problems.length} problem(s)`
    : report.repaired
      ? `repaired: kept ${report.kept} of ${report.lines} lines`
      : (report.refused ?? 'nothing to repair');
  return { outcome, target: run.id, detail, reply: lines.join('\n') };
}
