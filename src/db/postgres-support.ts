/**
 * What bridge.db on Postgres can do yet. `serve` runs on it (with BullMQ on REDIS_URL: the
 * embedded job queue is SQLite's), and `migrate` / `migrate --to postgres` use it. The commands
 * that open bridge.db through the CLI context still open the SQLite file, so they refuse a
 * DATABASE_URL at start rather than split their state between two databases.
 */
import { PhasebridgeError } from '../errors.ts';

/** The parts that still need SQLite (docs/operations.md, "Postgres", says the same). */
export const POSTGRES_MISSING =
  'the commands that open bridge.db themselves (agents, allow, bind, prune …) still open the SQLite file; serve runs on Postgres';

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

/**
 * Throws a CONFIG error with one line when `serve` is given a Postgres DATABASE_URL without
 * REDIS_URL: the embedded job queue lives in SQLite, so on Postgres jobs go through BullMQ.
 */
export function refusePostgresWithoutRedis(config: {
  readonly databaseUrl?: string | undefined;
  readonly redisUrl?: string | undefined;
}): void {
  if (config.databaseUrl === undefined) return;
  if (config.redisUrl !== undefined && config.redisUrl !== '') return;
  throw new PhasebridgeError(
    'CONFIG',
    'DATABASE_URL=postgres needs REDIS_URL for serve: the embedded job queue lives in SQLite, so on Postgres jobs go through BullMQ on Redis, see docs/operations.md (or unset DATABASE_URL to keep bridge.db in SQLite)',
  );
}
