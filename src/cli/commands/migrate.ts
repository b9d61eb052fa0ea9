import { existsSync } from 'node:fs';
import type { Command } from 'commander';
import { InvalidInputError, NotFoundError } from '../../errors.ts';
import type { CliContext } from '../context.ts';

/**
 * `phasebridge migrate`: bring bridge.db to the latest schema (a second run has nothing to do);
 * on Postgres when DATABASE_URL is set. `--to postgres` copies the SQLite bridge.db into the
 * empty Postgres database DATABASE_URL names, verified row by row.
 */
export function registerMigrateCommand(program: Command, ctx: CliContext): void {
  program
    .command('migrate')
    .description(
      'create or upgrade bridge.db under PHASEBRIDGE_HOME, or on Postgres with DATABASE_URL (also done at start-up)',
    )
    .option(
      '--to <dialect>',
      'copy the SQLite bridge.db into the empty Postgres database of DATABASE_URL (only: postgres)',
    )
    .action(async (opts: { to?: string }) => {
      if (opts.to !== undefined) return copyTo(ctx, opts.to);
      const config = await ctx.config();
      // Loaded here, not at the top: Kysely and SQLite are not needed for `--help`.
      const [{ openConfiguredDb }, { migrateToLatest }] = await Promise.all([
        import('../../db/open.ts'),
        import('../../db/migrator.ts'),
      ]);
      const db = await openConfiguredDb(config);
      const where = db.dialect === 'postgres' ? db.where : db.file;
      try {
        const { applied } = await migrateToLatest(db);
        if (applied.length === 0) console.log(`bridge.db is up to date (${where})`);
        for (const name of applied) console.log(`applied ${name}`);
      } finally {
        await db.close();
      }
    });
}

/** `--to postgres`: the copy, with one line per table and a closing count. */
async function copyTo(ctx: CliContext, dialect: string): Promise<void> {
  if (dialect !== 'postgres') {
    throw new InvalidInputError(`migrate --to: unknown dialect '${dialect}' (known: postgres)`);
  }
  const { databaseUrl } = await ctx.config();
  if (databaseUrl === undefined) {
    throw new InvalidInputError(
      'migrate --to postgres: set DATABASE_URL to the empty Postgres database to copy into (postgres://user:password@host:5432/dbname)',
    );
  }
  const file = await ctx.dbFile();
  // Never create an empty bridge.db just to copy nothing.
  if (!existsSync(file)) throw new NotFoundError(`migrate --to postgres: no bridge.db at ${file}`);
  const [{ openBridgeDb }, { openPostgresDb }, { copyToPostgres }] = await Promise.all([
    import('../../db/connection.ts'),
    import('../../db/dialects/postgres/connection.ts'),
    import('../../db/copy-to-postgres.ts'),
  ]);
  const source = openBridgeDb({ file });
  try {
    const target = await openPostgresDb({ url: databaseUrl, maxConnections: 1 });
    try {
      const copied = await copyToPostgres(source, target);
      for (const { table, rows } of copied) console.log(`copied ${table}: ${rows} rows`);
      const total = copied.reduce((n, t) => n + t.rows, 0);
      console.log(
        `copied and verified ${total} rows in ${copied.length} tables from ${file} to ${target.where}`,
      );
    } finally {
      await target.close();
    }
  } finally {
    await source.close();
  }
}
