import type { Command } from 'commander';
import { InvalidInputError } from '../../errors.ts';
import type { CliContext } from '../context.ts';
import { withOrchestrator } from '../orchestrator-context.ts';

/** `phasebridge worker`: a process that runs queued agent jobs until stopped (SIGINT/SIGTERM). */
export function registerWorkerCommand(program: Command, ctx: CliContext): void {
  program
    .command('worker')
    .description(
      'run queued agent jobs: BullMQ workers with REDIS_URL (other machines seeing the workspaces may run them too), else the embedded queue in bridge.db',
    )
    .option(
      '--concurrency <n>',
      'jobs run at once (at most one per run, except the tasks of a `tasks` step)',
      '2',
    )
    .action(async (opts: { concurrency: string }) => {
      const concurrency = Number(opts.concurrency);
      if (!Number.isSafeInteger(concurrency) || concurrency < 1) {
        throw new InvalidInputError(
          `--concurrency must be a whole number >= 1 (got '${opts.concurrency}')`,
        );
      }
      await withOrchestrator(ctx, { worker: { concurrency } }, async ({ queue }) => {
        const where =
          queue.driver === 'bullmq' ? 'BullMQ on REDIS_URL' : `bridge.db (${await ctx.dbFile()})`;
        console.log(
          `worker ${process.pid} running jobs from ${where}, concurrency ${concurrency}; Ctrl-C stops it`,
        );
        const signal = await stopSignal();
        console.log(`worker ${process.pid}: ${signal}, finishing running jobs`);
      });
      console.log('worker stopped');
    });
}

/** Resolves with the first SIGINT or SIGTERM; a second one then has its default effect (exit). */
function stopSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const on = (signal: NodeJS.Signals) => {
      process.off('SIGINT', on);
      process.off('SIGTERM', on);
      resolve(signal);
    };
    process.on('SIGINT', on);
    process.on('SIGTERM', on);
  });
}
