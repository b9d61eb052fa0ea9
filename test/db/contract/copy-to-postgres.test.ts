/**
 * `phasebridge migrate --to postgres`: a SQLite bridge.db copied into an empty Postgres database,
 * verified row by row inside the copy's transaction; a target that differs or already holds
 * bridge data changes nothing.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type BridgeDb, migrateToLatest, openBridgeDb } from '../../../src/db/connection.ts';
import { copyToPostgres } from '../../../src/db/copy-to-postgres.ts';
import { openPostgresDb, type PostgresDb } from '../../../src/db/dialects/postgres/connection.ts';
import { createRepositories } from '../../../src/db/repositories/index.ts';
import { hasCode } from '../../../src/errors.ts';
import { runCliAsync } from '../../cli/support.ts';
import { type PostgresHandle, sharedPostgres } from '../../support/postgres.ts';
import { slow } from '../../support/slowdown.ts';
import { POSTGRES_AVAILABLE, testDbOn } from './dialects.ts';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A SQLite bridge.db in a temp home with a little of everything, including a removed binding. */
async function filledSqlite(): Promise<{
  home: string;
  dir: string;
  db: BridgeDb;
  removedId: number;
}> {
  const dir = mkdtempSync(join(tmpdir(), 'pb-copy-'));
  const home = join(dir, 'home');
  const db = openBridgeDb({ file: join(home, 'bridge.db') });
  cleanups.push(async () => {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  });
  await migrateToLatest(db);
  const repos = createRepositories(db, { now: () => Date.UTC(2026, 10, 1) });
  await repos.agents.add({
    name: 'reviewer',
    engine: 'claude',
    argv: ['claude', '-p'],
    env: { A: 'b' },
  });
  const team = await repos.bindings.bind({ chatRef: 'telegram:-100', workspace: '/srv/app' });
  const gone = await repos.bindings.bind({ chatRef: 'telegram:-200', workspace: '/srv/old' });
  await repos.bindings.remove('telegram:-200');
  await repos.allowlist.allow({ bindingId: team.id }, 'telegram', '42', 'approver');
  await repos.allowlist.allow('global', 'slack', 'U1', 'admin');
  for (let i = 0; i < 450; i++) {
    await repos.audit.record({
      actor: `telegram:${i % 7}`,
      action: 'run',
      outcome: 'allowed',
      detail: `entry ${i} ünïcode`,
    });
  }
  await repos.runs.upsert({
    id: 'run-1',
    workflowId: 'demo',
    workspace: '/srv/app',
    layout: 'native',
    status: 'awaiting',
    createdAt: 1,
    updatedAt: 2,
    spec: 'Give the login page more contrast',
  });
  await repos.checkpointMessages.add({
    runId: 'run-1',
    checkpointId: 'plan:1',
    chatRef: 'telegram:-100',
    buttonToken: 'tok-1',
  });
  return { home, dir, db, removedId: gone.id };
}

if (!POSTGRES_AVAILABLE) {
  describe('migrate --to postgres', () => {
    testDbOn('postgres');
  });
} else {
  describe('migrate --to postgres', () => {
    let server: PostgresHandle;
    beforeAll(async () => {
      server = await sharedPostgres();
    }, slow(60_000));
    afterAll(() => server?.stop(), slow(30_000));

    async function target(url?: string): Promise<PostgresDb> {
      const db = await openPostgresDb({ url: url ?? (await server.createDatabase()) });
      cleanups.push(() => db.close());
      return db;
    }

    it(
      'copies every table and the copy reads back the same through the repositories',
      async () => {
        const { db: source, removedId } = await filledSqlite();
        const pg = await target();
        const copied = await copyToPostgres(source, pg);
        const counts = Object.fromEntries(copied.map((c) => [c.table, c.rows]));
        expect(counts).toMatchObject({
          agents: 1,
          bindings: 1,
          allowlist: 2,
          audit: 450,
          runs: 1,
          checkpoint_messages: 1,
        });
        const before = createRepositories(source);
        const after = createRepositories(pg);
        expect(await after.agents.list()).toEqual(await before.agents.list());
        expect(await after.bindings.list()).toEqual(await before.bindings.list());
        expect(await after.allowlist.list()).toEqual(await before.allowlist.list());
        expect(await after.audit.listRecent({ limit: 500 })).toEqual(
          await before.audit.listRecent({ limit: 500 }),
        );
        expect(await after.checkpointMessages.findByToken('tok-1')).toEqual(
          await before.checkpointMessages.findByToken('tok-1'),
        );
        // A removed binding's id is never given again (audit entries may name it).
        const next = await after.bindings.bind({ chatRef: 'telegram:-300', workspace: '/srv/new' });
        expect(next.id).toBeGreaterThan(removedId);
      },
      slow(60_000),
    );

    it(
      'refuses a target that already holds bridge data, changing nothing',
      async () => {
        const { db: source } = await filledSqlite();
        const pg = await target();
        await migrateToLatest(pg);
        await createRepositories(pg).agents.add({ name: 'already-here', engine: 'codex' });
        const error = await copyToPostgres(source, pg).catch((err: unknown) => err);
        expect(hasCode(error, 'INVALID_INPUT')).toBe(true);
        expect((error as Error).message).toMatch(
          /already holds bridge data \(agents\).*nothing was copied/,
        );
        expect((await createRepositories(pg).agents.list()).map((a) => a.name)).toEqual([
          'already-here',
        ]);
        expect(await createRepositories(pg).bindings.list()).toEqual([]);
      },
      slow(60_000),
    );

    it(
      'rolls the whole copy back when a row reads back different',
      async () => {
        const { db: source } = await filledSqlite();
        const pg = await target();
        await migrateToLatest(pg);
        // A trigger on the target rewrites one audit row as it is stored: verification must see it.
        await sql`create function pb_tamper() returns trigger language plpgsql as $$
        begin if new.detail = 'entry 300 ünïcode' then new.detail := 'changed'; end if; return new; end $$`.execute(
          pg.kysely,
        );
        await sql`create trigger pb_tamper before insert on audit for each row execute function pb_tamper()`.execute(
          pg.kysely,
        );
        const error = await copyToPostgres(source, pg).catch((err: unknown) => err);
        expect(hasCode(error, 'CORRUPT_STATE')).toBe(true);
        expect((error as Error).message).toMatch(
          /^copy of audit does not match at key \[\d+\], column detail; nothing was copied/,
        );
        for (const table of ['agents', 'bindings', 'allowlist', 'audit'] as const) {
          const n = await pg.kysely
            .selectFrom(table)
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .executeTakeFirstOrThrow();
          expect([table, n.n]).toEqual([table, 0]);
        }
      },
      slow(60_000),
    );

    it(
      'runs as `phasebridge migrate --to postgres`, naming the target without its password',
      async () => {
        const { home, dir, db } = await filledSqlite();
        await db.close();
        const url = new URL(await server.createDatabase());
        // Trust authentication ignores the password, so it can be any secret the output must hide.
        url.username = 'phasebridge';
        url.password = 'hunter2-secret';
        const res = await runCliAsync(['migrate', '--to', 'postgres'], home, dir, {
          DATABASE_URL: url.toString(),
        });
        expect(res.code, res.err).toBe(0);
        expect(res.out).toMatch(/^copied audit: 450 rows$/m);
        expect(res.out).toMatch(
          /copied and verified \d+ rows in \d+ tables from .*bridge\.db to postgres:\/\/phasebridge:\*\*\*@127\.0\.0\.1/,
        );
        expect(res.out).not.toContain('hunter2-secret');
        const again = await runCliAsync(['migrate', '--to', 'postgres'], home, dir, {
          DATABASE_URL: url.toString(),
        });
        expect(again.code).not.toBe(0);
        expect(again.err).toMatch(/already holds bridge data/);
        expect(again.err).not.toContain('hunter2-secret');
        const status = await runCliAsync(['migrate'], home, dir, { DATABASE_URL: url.toString() });
        expect(status.out).toMatch(/^bridge\.db is up to date \(postgres:\/\/phasebridge:\*\*\*@/);
      },
      slow(120_000),
    );
  });
}
