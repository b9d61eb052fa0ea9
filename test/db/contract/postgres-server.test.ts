/**
 * The private-Postgres harness itself: it starts, serves separate databases, and stops cleanly;
 * the shared server of a test process outlives files and ends with the process.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { describe, expect, it, onTestFinished } from 'vitest';
import { bundled } from '../../support/bundle.ts';
import {
  NO_POSTGRES_LINE,
  postgresBinDir,
  sharedPostgres,
  startPostgres,
} from '../../support/postgres.ts';
import { slow, waitUntil } from '../../support/slowdown.ts';

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

describe.skipIf(bin === undefined)('shared postgres server', () => {
  /** Names of the databases on the server at `url`. */
  const databases = async (url: string): Promise<string[]> => {
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
    try {
      await client.connect();
      const res = await client.query<{ datname: string }>('select datname from pg_database');
      return res.rows.map((r) => r.datname);
    } finally {
      await client.end().catch(() => {});
    }
  };
  const nameOf = (url: string) => new URL(url).pathname.slice(1);

  it(
    'is one server per process; a handle stops by dropping its own databases only',
    async () => {
      const [a, b] = await Promise.all([sharedPostgres(), sharedPostgres()]);
      expect(a.url).toBe(b.url);
      const [ofA, ofB] = [await a.createDatabase(), await b.createDatabase()];
      await a.stop();
      const left = await databases(b.url);
      expect(left).not.toContain(nameOf(ofA));
      expect(left).toContain(nameOf(ofB));
      await b.stop();
      expect(await databases(b.url)).not.toContain(nameOf(ofB));
    },
    slow(60_000),
  );

  it(
    'ends, its folder removed, when its process is killed',
    async () => {
      const child = spawn(
        process.execPath,
        [bundled(path.join(import.meta.dirname, '../fixtures/shared-postgres-child.ts'))],
        { stdio: ['ignore', 'pipe', 'inherit'] },
      );
      onTestFinished(() => {
        child.kill('SIGKILL');
      });
      let out = '';
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
      });
      const line = await waitUntil(() => out.split('\n').find((l) => l.startsWith('{')), {
        timeoutMs: 30_000,
        message: 'the child never reported its server',
      });
      const server = JSON.parse(line) as { url: string; dir: string };
      expect(await databases(server.url)).toContain('postgres');
      child.kill('SIGKILL');
      await waitUntil(() => !existsSync(server.dir), {
        timeoutMs: 20_000,
        message: `the folder ${server.dir} of the killed process's server stayed`,
      });
      await expect(databases(server.url)).rejects.toThrow();
    },
    slow(60_000),
  );
});
