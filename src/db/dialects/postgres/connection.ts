/**
 * Opens bridge.db on Postgres: a node-postgres pool behind kysely's PostgresDialect, with the
 * schema translation plugin. `pg` is imported only here, and this module only through `import()`
 * when DATABASE_URL selects Postgres (open.ts, `migrate`), so the embedded default never loads it.
 */
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { redactedDatabaseUrl } from '../../../database-url.ts';
import { ResourceError } from '../../../errors.ts';
import type { Database as Schema } from '../../schema.ts';
import { postgresDialect } from './dialect.ts';

/** OID of int8 (bigint): our integer columns and count(*). */
const INT8_OID = 20;

/** One open bridge.db on Postgres. */
export interface PostgresDb {
  readonly dialect: 'postgres';
  /** Typed query builder over the tables of `schema.ts`. */
  readonly kysely: Kysely<Schema>;
  /** DATABASE_URL without its password, for messages. */
  readonly where: string;
  /** Ends the pool; a second call does nothing. */
  close(): Promise<void>;
}

/**
 * Connects to `url` (postgres://…) and checks it answers; a server that cannot be reached is a
 * one-line ResourceError naming the URL without its password.
 */
export async function openPostgresDb(opts: {
  url: string;
  maxConnections?: number;
  /**
   * The server ends a session of this pool left idle inside a transaction this long (ms): a
   * leader paused mid-transaction (its locks would stall the bridge taking over) is cut off.
   */
  idleInTransactionMs?: number;
}): Promise<PostgresDb> {
  const where = redactedDatabaseUrl(opts.url);
  const pool = new pg.Pool({
    connectionString: opts.url,
    max: opts.maxConnections ?? 10,
    ...(opts.idleInTransactionMs !== undefined
      ? {
          options: `-c idle_in_transaction_session_timeout=${Math.floor(opts.idleInTransactionMs)}`,
        }
      : {}),
    // bigint columns hold ms times and ids, all far below 2^53: numbers, as SQLite gives them.
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === INT8_OID
          ? (value: string) => Number(value)
          : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
    },
  });
  // An idle connection dropped by the server must not crash the process; the next query reconnects.
  pool.on('error', () => {});
  // A checked-out connection the server ends (idle_in_transaction_session_timeout cutting off a
  // paused leader, a restart) emits 'error' on its client: without a listener that kills the
  // process. The query it was running rejects, and that is where the failure is handled.
  pool.on('connect', (client) => {
    client.on('error', () => {});
  });
  try {
    const client = await pool.connect();
    client.release();
  } catch (err) {
    await pool.end().catch(() => {});
    const reason = err instanceof Error ? err.message : String(err);
    throw new ResourceError(
      `cannot reach Postgres at ${where} (${reason}): check DATABASE_URL and that the server is up`,
      { cause: err },
    );
  }
  const kysely = new Kysely<Schema>({
    dialect: new PostgresDialect({ pool }),
    plugins: [...postgresDialect.plugins],
  });
  let closed = false;
  return {
    dialect: 'postgres',
    kysely,
    where,
    async close() {
      if (closed) return;
      closed = true;
      await kysely.destroy();
    },
  };
}
