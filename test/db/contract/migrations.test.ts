/** One set of migrations on both dialects: every table exists, and a fresh database migrates once. */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MIGRATIONS } from '../../../migrations/index.ts';
import { openPostgresDb } from '../../../src/db/dialects/postgres/connection.ts';
import { migrateToLatest, migrationStatus } from '../../../src/db/migrator.ts';
import { hasCode } from '../../../src/errors.ts';
import { type PostgresHandle, sharedPostgres } from '../../support/postgres.ts';
import { slow } from '../../support/slowdown.ts';
import { DIALECT_NAMES, POSTGRES_AVAILABLE, useContractDb } from './dialects.ts';

describe.each(DIALECT_NAMES)('migrations on %s', (dialect) => {
  const t = useContractDb(dialect);
  if (t === undefined) return;

  it('applies every migration once, and a second run applies none', async () => {
    const { db } = t();
    const status = await migrationStatus(db);
    expect(status.map((s) => s.name)).toEqual(Object.keys(MIGRATIONS).sort());
    expect(status.every((s) => s.appliedAt !== undefined)).toBe(true);
    expect(await migrateToLatest(db)).toEqual({ applied: [] });
  });

  it('refuses a database a newer phasebridge migrated, applying nothing', async () => {
    const { db } = t();
    await db.kysely
      .insertInto('kysely_migration' as never)
      .values({ name: '9999_from_the_future', timestamp: new Date().toISOString() } as never)
      .execute();
    const error = await migrateToLatest(db, {
      migrations: { ...MIGRATIONS, '0043_next': { up: async () => {} } },
    }).catch((err: unknown) => err);
    expect(hasCode(error, 'CORRUPT_STATE')).toBe(true);
    expect((error as Error).message).toMatch(
      /was written by a newer phasebridge \(migration 9999_from_the_future unknown to this version\)/,
    );
    const status = await migrationStatus(db);
    expect(status.filter((s) => s.unknown).map((s) => s.name)).toEqual(['9999_from_the_future']);
    expect(status.some((s) => s.name === '0043_next')).toBe(false);
  });

  it('stores ms times beyond 32 bits and numbers ids in order', async () => {
    const { db } = t();
    const at = Date.UTC(2026, 0, 1);
    const first = await db.kysely
      .insertInto('audit')
      .values({ at, actor: 'telegram:1', action: 'x', outcome: 'allowed' })
      .returning('id')
      .executeTakeFirstOrThrow();
    const second = await db.kysely
      .insertInto('audit')
      .values({ at: at + 1, actor: 'telegram:1', action: 'y', outcome: 'allowed' })
      .returning('id')
      .executeTakeFirstOrThrow();
    expect(second.id).toBeGreaterThan(first.id);
    const rows = await db.kysely.selectFrom('audit').select(['id', 'at']).orderBy('id').execute();
    expect(rows).toEqual([
      { id: first.id, at },
      { id: second.id, at: at + 1 },
    ]);
    const count = await db.kysely
      .selectFrom('audit')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    expect(count.n).toBe(2);
  });

  it('computes an allowlist scope from its binding and refuses a value its CHECK forbids', async () => {
    const { db } = t();
    const binding = await db.kysely
      .insertInto('bindings')
      .values({ chat_ref: 'telegram:5', workspace: '/w', created_at: 1, updated_at: 1 })
      .returning('id')
      .executeTakeFirstOrThrow();
    await db.kysely
      .insertInto('allowlist')
      .values([
        {
          binding_id: binding.id,
          platform: 'telegram',
          user_id: '7',
          role: 'admin',
          created_at: 1,
        },
        { binding_id: null, platform: 'telegram', user_id: '7', role: 'viewer', created_at: 1 },
      ])
      .execute();
    const scopes = await db.kysely
      .selectFrom('allowlist')
      .select('scope')
      .orderBy('scope')
      .execute();
    expect(scopes.map((s) => s.scope)).toEqual([`binding:${binding.id}`, 'global']);
    const outboxRow = (urgency: string) => ({
      platform: 'telegram',
      lane: 'l',
      kind: 'send' as const,
      target: 't',
      payload_json: '{}',
      urgency: urgency as 'interactive',
      state: 'pending' as const,
      created_at: 1,
      updated_at: 1,
    });
    // 0040 widened the CHECK (a table rebuild on SQLite, an ALTER on Postgres).
    await db.kysely.insertInto('outbox').values(outboxRow('interactive')).execute();
    await expect(
      db.kysely.insertInto('outbox').values(outboxRow('loud')).execute(),
    ).rejects.toThrow(/check/i);
    const urgencies = await db.kysely.selectFrom('outbox').select('urgency').execute();
    expect(urgencies).toEqual([{ urgency: 'interactive' }]);
  });
});

describe.skipIf(!POSTGRES_AVAILABLE)('migrations on postgres, two processes at once', () => {
  let server: PostgresHandle;
  beforeAll(async () => {
    server = await sharedPostgres();
  }, slow(60_000));
  afterAll(() => server?.stop(), slow(30_000));

  it(
    'applies each migration once when two connections migrate an empty database together',
    async () => {
      const url = await server.createDatabase();
      const [a, b] = await Promise.all([openPostgresDb({ url }), openPostgresDb({ url })]);
      try {
        const [first, second] = await Promise.all([migrateToLatest(a), migrateToLatest(b)]);
        const applied = [...first.applied, ...second.applied].sort();
        expect(applied).toEqual(Object.keys(MIGRATIONS).sort());
        const rows = await a.kysely
          .selectFrom('kysely_migration' as never)
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow();
        expect(rows.n).toBe(Object.keys(MIGRATIONS).length);
      } finally {
        await Promise.all([a.close(), b.close()]);
      }
    },
    slow(60_000),
  );

  it(
    'leaves no 32-bit integer or single-precision column: ms times and ids fit everywhere',
    async () => {
      const db = await openPostgresDb({ url: await server.createDatabase() });
      try {
        await migrateToLatest(db);
        const narrow = await sql<{
          column: string;
          type: string;
        }>`select table_name || '.' || column_name as column, data_type as type
          from information_schema.columns where table_schema = 'public'
          and table_name not like 'kysely_%' and data_type in ('integer', 'smallint', 'real')`.execute(
          db.kysely,
        );
        expect(narrow.rows).toEqual([]);
        const identities = await sql<{
          column: string;
        }>`select table_name || '.' || column_name as column
          from information_schema.columns where table_schema = 'public' and is_identity = 'YES'
          order by 1`.execute(db.kysely);
        expect(identities.rows.map((r) => r.column)).toEqual(
          expect.arrayContaining([
            'agents.id',
            'allowlist.id',
            'audit.id',
            'bindings.id',
            'outbox.id',
          ]),
        );
      } finally {
        await db.close();
      }
    },
    slow(60_000),
  );

  it('names an unreachable server without the password', async () => {
    const error = await openPostgresDb({
      url: 'postgres://bridge:pw-77aa@127.0.0.1:1/bridge',
    }).catch((err: unknown) => err);
    expect(hasCode(error, 'RESOURCE')).toBe(true);
    expect((error as Error).message).toMatch(
      /^cannot reach Postgres at postgres:\/\/bridge:\*\*\*@127\.0\.0\.1:1\/bridge \(.*\): check DATABASE_URL/,
    );
    expect((error as Error).message).not.toContain('pw-77aa');
  });
});
