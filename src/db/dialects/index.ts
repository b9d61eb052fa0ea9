/**
 * The dialects of bridge.db, listed once. SQLite is the embedded default; DATABASE_URL
 * (postgres://…) selects Postgres. Code that writes SQL which differs asks `dialectOf(db)`.
 */
import type { Kysely } from 'kysely';
import { postgresDialect } from './postgres/dialect.ts';
import { sqliteDialect } from './sqlite/dialect.ts';
import type { BridgeDialect, ConstraintFailure, DialectName } from './types.ts';

export type { BridgeDialect, ConstraintFailure, DialectName } from './types.ts';

/** Every dialect, by name. */
export const DIALECTS: Readonly<Record<DialectName, BridgeDialect>> = Object.freeze({
  sqlite: sqliteDialect,
  postgres: postgresDialect,
});

/**
 * The dialect a Kysely instance (or transaction) runs on, read from its executor's adapter, so
 * repositories and migrations need no extra argument.
 */
export function dialectOf<DB>(db: Kysely<DB>): BridgeDialect {
  const adapter = db.getExecutor().adapter;
  for (const dialect of Object.values(DIALECTS)) if (dialect.owns(adapter)) return dialect;
  throw new Error(`bridge.db: no dialect owns kysely adapter ${adapter.constructor.name}`);
}

/** The constraint failure a driver error reports, whichever dialect raised it. */
export function constraintOf(err: unknown): ConstraintFailure | undefined {
  for (const dialect of Object.values(DIALECTS)) {
    const failure = dialect.constraintOf(err);
    if (failure !== undefined) return failure;
  }
  return undefined;
}
