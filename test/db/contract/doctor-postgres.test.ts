/**
 * `phasebridge doctor` with DATABASE_URL: its bridge.db line checks Postgres itself. A migrated
 * database passes with the server's version; a database not migrated fails with "run
 * `phasebridge migrate`"; a server that does not answer fails with how to fix it. The password
 * is never printed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkBridgeDb } from '../../../src/cli/doctor-checks.ts';
import { migrateToLatest } from '../../../src/db/connection.ts';
import { openPostgresDb } from '../../../src/db/dialects/postgres/connection.ts';
import { NO_POSTGRES_LINE, type PostgresHandle, sharedPostgres } from '../../support/postgres.ts';
import { inCi } from '../../support/redis.ts';
import { slow } from '../../support/slowdown.ts';
import { POSTGRES_AVAILABLE } from './dialects.ts';

/** The URL with a password, as an operator would set it (trust auth ignores it). */
const withPassword = (url: string) => {
  const u = new URL(url);
  u.password = 'pw-7e2a';
  return u.toString();
};

if (!POSTGRES_AVAILABLE && !inCi()) {
  describe('doctor on Postgres', () => {
    console.warn(NO_POSTGRES_LINE);
    it.skip(NO_POSTGRES_LINE, () => {});
  });
} else {
  describe('doctor on Postgres', () => {
    let pg: PostgresHandle;
    beforeAll(async () => {
      pg = await sharedPostgres();
    }, slow(60_000));
    afterAll(() => pg?.stop(), slow(30_000));
    const check = (databaseUrl: string) => checkBridgeDb({ home: '/nonexistent', databaseUrl }, '');

    it('passes a migrated database, naming the server version', async () => {
      const url = await pg.createDatabase();
      const db = await openPostgresDb({ url });
      await migrateToLatest(db);
      await db.close();
      const line = await check(withPassword(url));
      expect(line.ok).toBe(true);
      expect(line.detail).toMatch(/, Postgres \d+(\.\d+)?.*, \d+ migration\(s\) applied$/);
      expect(line.detail).not.toContain('pw-7e2a');
    });

    it('fails a database not migrated, saying to migrate', async () => {
      const line = await check(withPassword(await pg.createDatabase()));
      expect(line).toMatchObject({ ok: false, fix: 'run `phasebridge migrate`' });
      expect(line.detail).toMatch(/^\d+ migration\(s\) pending: 0001_/);
    });

    it('fails a server that does not answer, with the fix', async () => {
      const line = await check('postgres://bridge:pw-7e2a@127.0.0.1:1/bridge');
      expect(line.ok).toBe(false);
      expect(line.detail).toMatch(
        /^cannot reach Postgres at postgres:\/\/bridge:\*\*\*@127\.0\.0\.1:1\/bridge/,
      );
      expect(line.detail).not.toContain('pw-7e2a');
      expect(line.fix).toMatch(/start Postgres or correct DATABASE_URL/);
    });
  });
}
