import { resolve } from 'node:path';
import type { Command } from 'commander';
import { NotFoundError } from '../../errors.ts';
import type { CliContext } from '../context.ts';
import { withOrchestrator } from '../orchestrator-context.ts';
import { findRunRecord } from '../read-run.ts';
import { describeStanding } from '../render/standing.ts';

/**
 * `phasebridge repair RUN [--dry-run]`: says what is wrong with a run's files; unless dry, backs
 * them up, keeps the ledger's longest valid prefix and rebuilds the projections. Exit 0 when
 * repaired or healthy, 1 when refused.
 */
export function registerRepairCommand(program: Command, ctx: CliContext): void {
  program
    .command('repair')
    .description(
      "repair a run's damaged files: keep the ledger's longest valid prefix (backed up first) and rebuild run.json and the layout files",
    )
    .argument('<run>', 'the run id')
    .option('--dry-run', 'only show what is wrong and what a repair would keep and drop')
    .option('--workspace <dir>', "the run's workspace, when the runs index does not know the run")
    .action(async (runId: string, opts: { dryRun?: boolean; workspace?: string }) => {
      // Loaded here: `--help` and every other command would pay for the store and SQLite.
      const { describeRepair, repairRun } = await import('../../jobs/orchestrator/repair-run.ts');
      const { RunFeedRepo } = await import('../../db/repositories/run-feed.ts');
      const dryRun = opts.dryRun === true;
      const workspace = await workspaceOf(ctx, runId, opts.workspace);
      const agents = (await ctx.repos()).agents;
      const report = await repairRun({ workspace, runId, dryRun, agents });
      for (const line of describeRepair(report, dryRun)) console.log(line);
      if (report.refused !== null) {
        process.exitCode = 1;
        return;
      }
      if (!report.repaired || report.state === null) return;
      let state = report.state;
      // A bridge running on this home sees the cut-back ledger at once and shows it.
      new RunFeedRepo(await ctx.db()).record([{ runId, seq: state.seq }]);
      const runs = (await ctx.repos()).runs;
      if (await runs.get(runId))
        await runs.updateStatus(runId, state.status, Date.parse(state.updatedAt));
      if (state.status === 'active') {
        // The kept prefix may leave a step in flight whose job is gone: start-up reconciliation
        // (run by opening the orchestrator) re-queues or blocks it, as after a crash.
        await withOrchestrator(ctx, { worker: false }, async () => {});
        state = await peek(workspace, runId);
      }
      for (const line of describeStanding(state).lines) console.log(line);
    });
}

async function workspaceOf(ctx: CliContext, runId: string, given?: string): Promise<string> {
  if (given !== undefined) return resolve(given);
  try {
    return (await findRunRecord(ctx, runId)).workspace;
  } catch (err) {
    if (!(err instanceof NotFoundError)) throw err;
    throw new NotFoundError(`${err.message}; give its folder with --workspace DIR`);
  }
}

async function peek(workspace: string, runId: string) {
  const { RunStore } = await import('../../engine/store/run-store.ts');
  const store = new RunStore({ workspace });
  try {
    return (await store.peek(runId)).state;
  } finally {
    await store.close();
  }
}
