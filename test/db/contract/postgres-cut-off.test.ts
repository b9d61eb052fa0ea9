/**
 * A Postgres session the server ends while the bridge holds it (idle_in_transaction_session_timeout
 * cutting off a paused leader, a server restart): the query on it fails, the process lives on and
 * the next query works on a fresh connection.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgresDb, type PostgresDb } from '../../../src/db/dialects/postgres/connection.ts';
import {
  NO_POSTGRES_LINE,
  type PostgresHandle,
  postgresBinDir,
  startPostgres,
} from '../../support/postgres.ts';
import { inCi } from '../../support/redis.ts';
import { slow } from '../../support/slowdown.ts';

const bin = postgresBinDir();
if (bin === undefined && inCi()) throw new Error(`${NO_POSTGRES_LINE} (.ci/run installs it)`);
if (bin === undefined) console.warn(NO_POSTGRES_LINE);

describe.skipIf(bin === undefined)('a Postgres session ended by the server', () => {
  let server: PostgresHandle;
  let db: PostgresDb | undefined;
  beforeAll(async () => {
    server = await startPostgres();
  }, slow(60_000));
  afterAll(async () => {
    await db?.close();
    await server?.stop();
  });

  it(
    'a transaction left idle past the timeout fails its next query; the process and the pool go on',
    async () => {
      db = await openPostgresDb({ url: await server.createDatabase(), idleInTransactionMs: 200 });
      const outcome = await db.kysely
        .transaction()
        .execute(async (trx) => {
          await sql`select 1`.execute(trx);
          // Paused inside the transaction: the server ends the session after 200 ms. Without a
          // listener on the checked-out client, its 'error' event would kill this process.
          await new Promise((r) => setTimeout(r, 1_000));
          await sql`select 2`.execute(trx);
          return 'committed';
        })
        .catch((err: Error) => `failed: ${err.message}`);
      expect(outcome).toMatch(/^failed: /);
      const after = await sql<{ n: number }>`select 3 as n`.execute(db.kysely);
      expect(after.rows[0]!.n).toBe(3);
    },
    slow(30_000),
  );
});
