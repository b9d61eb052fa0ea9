import type { Command } from 'commander';
import type { CliContext } from '../context.ts';
import { driveRun } from '../drive.ts';
import { acceptedState, cliKey } from '../orchestrator-context.ts';

/** `cancel`, `resume`, `skip`, `retry` and `revert`: move a run by hand, then drive it on. */
export function registerControlCommands(program: Command, ctx: CliContext): void {
  program
    .command('cancel')
    .description('end a run as cancelled; its running step is stopped')
    .argument('<run>', 'the run id')
    .option('--reason <text>', 'why')
    .action(async (runId: string, opts: { reason?: string }) => {
      await driveRun(ctx, { detach: true, cancelWanted: true, runId }, async (o) =>
        acceptedState(
          await o.command(runId, cliKey(), {
            type: 'cancel',
            actor: { id: ctx.actor },
            ...(opts.reason === undefined ? {} : { reason: opts.reason }),
          }),
        ),
      );
    });

  program
    .command('resume')
    .description('continue a paused or interrupted run and drive it on')
    .argument('<run>', 'the run id')
    .option('--detach', 'only record it; `serve` or `worker` runs the jobs')
    .action(async (runId: string, opts: { detach?: boolean }) => {
      await driveRun(ctx, { detach: opts.detach === true, runId, showBlocked: true }, async (o) =>
        acceptedState(
          await o.command(runId, cliKey(), { type: 'resume', actor: { id: ctx.actor } }),
        ),
      );
    });

  program
    .command('retry')
    .description('run the failed or interrupted step again as a new attempt, and drive the run on')
    .argument('<run>', 'the run id')
    .option('--detach', 'only record it; `serve` or `worker` runs the jobs')
    .action(async (runId: string, opts: { detach?: boolean }) => {
      await driveRun(ctx, { detach: opts.detach === true, runId, showBlocked: true }, async (o) =>
        acceptedState(
          await o.command(runId, cliKey(), { type: 'retry', actor: { id: ctx.actor } }),
        ),
      );
    });

  program
    .command('reopen')
    .description('open the expired checkpoint of a run again, with a fresh expiry')
    .argument('<run>', 'the run id')
    .action(async (runId: string) => {
      await driveRun(ctx, { detach: true, runId }, async (o) =>
        acceptedState(
          await o.command(runId, cliKey(), { type: 'reopenCheckpoint', actor: { id: ctx.actor } }),
        ),
      );
    });

  program
    .command('skip')
    .description('mark the current step skipped and drive the run on from the next one')
    .argument('<run>', 'the run id')
    .option('--step <id>', 'only if this is still the current step')
    .option('--reason <text>', 'why')
    .option('--detach', 'only record it; `serve` or `worker` runs the jobs')
    .action(async (runId: string, opts: { step?: string; reason?: string; detach?: boolean }) => {
      await driveRun(ctx, { detach: opts.detach === true, runId }, async (o) =>
        acceptedState(
          await o.command(runId, cliKey(), {
            type: 'skip',
            actor: { id: ctx.actor },
            ...(opts.step === undefined ? {} : { stepId: opts.step }),
            ...(opts.reason === undefined ? {} : { reason: opts.reason }),
          }),
        ),
      );
    });

  program
    .command('revert')
    .description('go back to an earlier step: it and every later step run again')
    .argument('<run>', 'the run id')
    .argument('<step>', 'the step id to go back to')
    .option('--detach', 'only record it; `serve` or `worker` runs the jobs')
    .action(async (runId: string, stepId: string, opts: { detach?: boolean }) => {
      await driveRun(ctx, { detach: opts.detach === true, runId }, async (o) =>
        acceptedState(
          await o.command(runId, cliKey(), {
            type: 'revert',
            toStepId: stepId,
            source: 'command',
            actor: { id: ctx.actor },
          }),
        ),
      );
    });
}
