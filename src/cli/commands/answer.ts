import type { Command } from 'commander';
import type { CheckpointAnswer } from '../../engine/model.ts';
import { approvalDigest } from '../approve-digest.ts';
import type { CliContext } from '../context.ts';
import { driveRun } from '../drive.ts';
import { acceptedState, cliKey } from '../orchestrator-context.ts';

/** `approve`, `reject` and `changes` (alias `loop`): answer a run's open checkpoint, then drive the run on. */
export function registerAnswerCommands(program: Command, ctx: CliContext): void {
  program
    .command('approve')
    .description("approve the run's open checkpoint and drive the run on until it needs a human")
    .argument('<run>', 'the run id')
    .option('--reason <text>', "why (kept with the decision; the next step's agent reads it)")
    .option('--comment <text>', "a note for the next step's agent, kept with the decision")
    .option('--checkpoint <id>', 'only if this is still the open checkpoint (e.g. plan:1)')
    .option(
      '--digest <hex>',
      "only if the checkpoint's content is still this digest (its short form, e.g. a1b2c3, or in full)",
    )
    .option('--detach', 'only record the answer; `serve` or `worker` runs the next steps')
    .action(async (runId: string, opts: AnswerOptions) =>
      answer(ctx, runId, 'approve', { ...opts, reason: withComment(opts) }),
    );

  program
    .command('reject')
    .description("reject the run's open checkpoint (a reason is required)")
    .argument('<run>', 'the run id')
    .requiredOption('--reason <text>', 'why it is rejected')
    .option('--checkpoint <id>', 'only if this is still the open checkpoint (e.g. plan:1)')
    .option('--detach', 'only record the answer; `serve` or `worker` runs what follows')
    .action(async (runId: string, opts: AnswerOptions) => answer(ctx, runId, 'reject', opts));

  program
    .command('changes')
    .alias('loop')
    .description(
      "request changes at the run's open checkpoint: the step (or its loop.backTo) runs again with the reason, counted against its loop max (default 3); then drive the run on",
    )
    .argument('<run>', 'the run id')
    .requiredOption('--reason <text>', 'what to change (the agent of the next attempt gets it)')
    .option('--checkpoint <id>', 'only if this is still the open checkpoint (e.g. review:1)')
    .option('--detach', 'only record the answer; `serve` or `worker` runs the next steps')
    .action(async (runId: string, opts: AnswerOptions) => answer(ctx, runId, 'loop', opts));
}

interface AnswerOptions {
  reason?: string;
  comment?: string;
  checkpoint?: string;
  digest?: string;
  detach?: boolean;
}

/** An approval's words: the reason and the comment (both reach the next step's agent). */
function withComment(opts: AnswerOptions): string | undefined {
  const words = [opts.reason, opts.comment].filter((t) => t !== undefined && t.trim() !== '');
  return words.length === 0 ? opts.reason : words.join('\n');
}

async function answer(
  ctx: CliContext,
  runId: string,
  value: CheckpointAnswer,
  opts: AnswerOptions,
): Promise<void> {
  await driveRun(ctx, { detach: opts.detach === true, runId }, async (orchestrator) => {
    // An approval is bound to the content as it is now (approve-digest.ts).
    const digest =
      value === 'approve' ? await approvalDigest(orchestrator, runId, opts) : undefined;
    return acceptedState(
      await orchestrator.command(runId, cliKey(), {
        ...(value === 'loop'
          ? { type: 'requestChanges' as const, reason: opts.reason ?? '' }
          : {
              type: 'answerCheckpoint' as const,
              answer: value,
              ...(opts.reason === undefined ? {} : { reason: opts.reason }),
              ...(digest === undefined ? {} : { digest }),
            }),
        actor: { id: ctx.actor },
        ...(opts.checkpoint === undefined ? {} : { checkpointId: opts.checkpoint }),
      }),
    );
  });
}
