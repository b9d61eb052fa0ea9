/**
 * What bridge.db on Postgres can do yet. The repositories and migrations run on both dialects,
 * but a few hot paths still talk to better-sqlite3 synchronously, so `serve` and the commands that
 * open bridge.db refuse a DATABASE_URL at start rather than split their state between two
 * databases. `phasebridge migrate --to postgres` is the one command that uses it today.
 */
import { PhasebridgeError } from '../errors.ts';

/** The parts of bridge.db that still need SQLite (docs/operations.md, "Postgres", says the same). */
export const POSTGRES_MISSING =
  'the embedded job queue and the CLI commands still use SQLite directly';

/**
 * Throws a CONFIG error with one line when `databaseUrl` is set: `what` (e.g. "serve") cannot run
 * on Postgres yet. Does nothing when it is unset (the embedded SQLite default).
 */
export function refuseDatabaseUrl(databaseUrl: string | undefined, what: string): void {
  if (databaseUrl === undefined) return;
  throw new PhasebridgeError(
    'CONFIG',
    `DATABASE_URL=postgres is not yet supported by ${what}: ${POSTGRES_MISSING}, see docs/operations.md (unset DATABASE_URL to keep bridge.db in SQLite)`,
  );
}
