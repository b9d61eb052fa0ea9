/** One set of migrations on both dialects: every table exists, and a fresh database migrates once. */
import { describe, expect, it } from 'vitest';
import { MIGRATIONS } from '../../../migrations/index.ts';
import { migrateToLatest, migrationStatus } from '../../../src/db/migrator.ts';
import { DIALECT_NAMES, useContractDb } from './dialects.ts';

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
