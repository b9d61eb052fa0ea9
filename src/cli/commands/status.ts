import { resolve } from 'node:path';
import { type Command, Option } from 'commander';
import type { RunIndexStatus } from '../../db/schema.ts';
import { InvalidInputError } from '../../errors.ts';
import type { CliContext } from '../context.ts';
import { readRun } from '../read-run.ts';
import { renderFeedback } from '../render/feedback-lines.ts';
import { describeStanding } from '../render/standing.ts';
import { renderRunsTable } from '../render/status-table.ts';
import { renderCheckpoint, renderRunHeader, renderStepTable } from '../render/step-list.ts';

const STATUSES: readonly RunIndexStatus[] = [
  'active',
  'awaiting',
  'blocked',
  'completed',
  'failed',
  'cancelled',
];

/** `phasebridge status [RUN]`: the runs table, or one run's steps, checkpoint and next command. */
export function registerStatusCommand(program: Command, ctx: CliContext): void {
  program
    .command('status')
    .description(
      "list runs, or show one run's steps (status, times, tokens, cost) and its open checkpoint",
    )
    .argument('[run]', 'a run id; without it, the runs table')
    .addOption(new Option('--status <status>', 'only runs with this status').choices(STATUSES))
    .option('--workspace <dir>', 'only runs of this workspace')
    .option('--limit <n>', 'at most this many runs (default 20)', '20')
    .option('--json', "print the run's whole state as JSON (with a run id)")
    .action(async (runId: string | undefined, opts: StatusOptions) => {
      if (runId === undefined) {
        await printRunsTable(ctx, opts);
        return;
      }
      const { state } = await readRun(ctx, runId);
      if (opts.json) {
        console.log(JSON.stringify(state, null, 2));
        return;
      }
      const lines = [...renderRunHeader(state), '', ...renderStepTable(state, new Date())];
      if (state.checkpoint) lines.push('', ...renderCheckpoint(state.checkpoint, state));
      const feedback = renderFeedback(state);
      if (feedback.length > 0) lines.push('', ...feedback);
      if (state.status !== 'active') lines.push('', ...describeStanding(state).lines);
      // Loaded here: only a run's status reads template.json.
      const { pendingEditLines } = await import('../render/pending-edit.ts');
      const edit = await pendingEditLines(state);
      if (edit.length > 0) lines.push('', ...edit);
      for (const line of lines) console.log(line);
    });
}

/** `phasebridge runs`: the runs table, as chat's `runs` lists a chat's recent runs. */
export function registerRunsCommand(program: Command, ctx: CliContext): void {
  program
    .command('runs')
    .description('list recent runs (the same table as `status` without a run)')
    .addOption(new Option('--status <status>', 'only runs with this status').choices(STATUSES))
    .option('--workspace <dir>', 'only runs of this workspace')
    .option('--limit <n>', 'at most this many runs (default 20)', '20')
    .option('--json', 'print the runs as JSON')
    .action(async (opts: StatusOptions) => printRunsTable(ctx, opts));
}

interface StatusOptions {
  status?: RunIndexStatus;
  workspace?: string;
  limit: string;
  json?: boolean;
}

async function printRunsTable(ctx: CliContext, opts: StatusOptions): Promise<void> {
  const limit = Number(opts.limit);
  if (!Number.isSafeInteger(limit) || limit < 1) {
    throw new InvalidInputError(`--limit must be a whole number >= 1 (got '${opts.limit}')`);
  }
  const runs = await (await ctx.repos()).runs.list({
    limit,
    ...(opts.status === undefined ? {} : { status: opts.status }),
    ...(opts.workspace === undefined ? {} : { workspace: resolve(opts.workspace) }),
  });
  if (opts.json) {
    console.log(JSON.stringify(runs, null, 2));
    return;
  }
  for (const line of renderRunsTable(runs)) console.log(line);
}
