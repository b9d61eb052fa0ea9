/**
 * `phasebridge diff RUN [STEP] [--attempt N]`: chat's `diff` verb from a shell. Prints the diff a
 * step's attempt made (the `<log>.diff` beside its log, at most 1 MB, with a note when cut);
 * default: the open checkpoint's step, else the latest step that ran.
 */
import type { Command } from 'commander';
import { InvalidInputError, NotFoundError } from '../../errors.ts';
import type { CliContext } from '../context.ts';
import { readRun } from '../read-run.ts';

/** Registers `diff`. */
export function registerDiffCommand(program: Command, ctx: CliContext): void {
  program
    .command('diff')
    .description(
      "print a step's diff (default: the open checkpoint's step, else the latest that ran)",
    )
    .argument('<run>', 'the run id')
    .argument('[step]', 'this step (its latest attempt unless --attempt)')
    .option('--attempt <n>', 'this attempt of the step instead of the latest')
    .action(async (runId: string, stepId: string | undefined, opts: { attempt?: string }) => {
      const { state } = await readRun(ctx, runId);
      const named = stepId ?? state.checkpoint?.stepId;
      const step =
        named === undefined
          ? state.steps.findLast((s) => s.attempt > 0)
          : state.steps.find((s) => s.id === named);
      if (!step) throw new NotFoundError(`run ${runId} has no step ${named ?? 'that ran'}`);
      const attempt = opts.attempt === undefined ? step.attempt : Number(opts.attempt);
      if (!Number.isSafeInteger(attempt) || attempt < 1 || attempt > step.attempt) {
        throw new InvalidInputError(
          `--attempt must be a whole number from 1 to ${step.attempt} (got '${opts.attempt}')`,
        );
      }
      const { readStepDiff } = await import('../../chatops/step-diff.ts');
      const diff = readStepDiff(state, step, attempt);
      if (typeof diff === 'string') throw new NotFoundError(diff);
      process.stdout.write(diff.data);
    });
}
