/** The private-Postgres harness itself: it starts, serves separate databases, and stops cleanly. */
import { existsSync } from 'node:fs';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { NO_POSTGRES_LINE, postgresBinDir, startPostgres } from '../../support/postgres.ts';
import { slow } from '../../support/slowdown.ts';

const bin = postgresBinDir();
if (bin === undefined) console.warn(NO_POSTGRES_LINE);

describe.skipIf(bin === undefined)('private postgres server', () => {
  it(
    'answers queries in its own databases and leaves nothing behind when stopped',
    async () => {
      const server = await startPostgres();
      let port = '';
      try {
        const first = await server.createDatabase();
        const second = await server.createDatabase();
        expect(first).not.toBe(second);
        port = new URL(first).port;
        const client = new pg.Client({ connectionString: first });
        await client.connect();
        await client.query('create table t (x int)');
        const names = await client.query('select current_database() as name');
        expect(`/${names.rows[0].name}`).toBe(new URL(first).pathname);
        await client.end();
        const other = new pg.Client({ connectionString: second });
        await other.connect();
        const tables = await other.query(
          "select count(*)::int as n from pg_tables where tablename = 't'",
        );
        expect(tables.rows[0].n).toBe(0);
        await other.end();
      } finally {
        await server.stop();
      }
      const after = new pg.Client({ connectionString: server.url, connectionTimeoutMillis: 1000 });
      await expect(after.connect()).rejects.toThrow();
      expect(port).not.toBe('');
      expect(existsSync(server.dir)).toBe(false);
    },
    slow(60_000),
  );
});
