import type { Command } from 'commander';
import { migrateToLatest, openBridgeDb } from '../../db/connection.ts';
import type { CliContext } from '../context.ts';

/** `phasebridge migrate`: bring bridge.db to the latest schema (a second run has nothing to do). */
export function registerMigrateCommand(program: Command, ctx: CliContext): void {
  program
    .command('migrate')
    .description('create or upgrade bridge.db under PHASEBRIDGE_HOME (also done at start-up)')
    .action(async () => {
      const db = openBridgeDb({ file: ctx.dbFile });
      try {
        const { applied } = await migrateToLatest(db);
        if (applied.length === 0) console.log(`bridge.db is up to date (${ctx.dbFile})`);
        for (const name of applied) console.log(`applied ${name}`);
      } finally {
        await db.close();
      }
    });
}
