import type { Command } from 'commander';
import type { CliContext } from '../context.ts';

/** `phasebridge serve`: the long-running bridge. */
export function registerServeCommand(program: Command, ctx: CliContext): void {
  program
    .command('serve')
    .description(
      'run the bridge: engine, queue, notifier and every platform adapter whose token is set',
    )
    .action(async () => {
      const db = await ctx.db();
      ctx.log.info({ db: db.file }, 'bridge.db ready');
      ctx.log.warn('chat adapters are not built yet (issue 5); use the CLI commands meanwhile');
      await new Promise<void>((resolve) => {
        process.once('SIGINT', resolve);
        process.once('SIGTERM', resolve);
      });
      ctx.log.info('stopped');
    });
}
