import type { Command } from 'commander';
import type { CliContext } from '../context.ts';

/** `phasebridge migrate`: bring bridge.db to the latest schema (a second run has nothing to do). */
export function registerMigrateCommand(program: Command, ctx: CliContext): void {
  program
    .command('migrate')
    .description('create or upgrade bridge.db under PHASEBRIDGE_HOME (also done at start-up)')
    .action(async () => {
      const file = await ctx.dbFile();
      // Loaded here, not at the top: Kysely and SQLite are not needed for `--help`.
      const { migrateToLatest, openBridgeDb } = await import('../../db/connection.ts');
      const db = openBridgeDb({ file });
      try {
        const { applied } = await migrateToLatest(db);
        if (applied.length === 0) console.log(`bridge.db is up to date (${file})`);
        for (const name of applied) console.log(`applied ${name}`);
      } finally {
        await db.close();
      }
    });
}
