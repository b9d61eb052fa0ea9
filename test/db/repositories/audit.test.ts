import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DIALECT_NAMES, type DialectTestDb, testDbOn } from '../contract/dialects.ts';

describe.each(DIALECT_NAMES)('AuditRepo on %s', (dialect) => {
  const open = testDbOn(dialect);
  if (open === undefined) return;
  let t: DialectTestDb;
  beforeEach(async () => {
    t = await open();
  });
  afterEach(() => t.cleanup());

  it('records entries and lists the most recent first', async () => {
    const first = await t.repos.audit.record({
      actor: 'telegram:42',
      action: 'approve',
      target: 'run 2026-01-01T000000Z-a',
      chatRef: 'telegram:1',
      outcome: 'allowed',
    });
    expect(first).toEqual({
      id: expect.any(Number),
      at: 1_000_000,
      actor: 'telegram:42',
      action: 'approve',
      target: 'run 2026-01-01T000000Z-a',
      chatRef: 'telegram:1',
      outcome: 'allowed',
      detail: null,
    });
    await t.repos.audit.record({
      at: 2_000_000,
      actor: 'telegram:7',
      action: 'allow',
      outcome: 'refused',
      detail: 'not admin',
    });
    await t.repos.audit.record({
      at: 3_000_000,
      actor: 'cli:alice',
      action: 'bind',
      outcome: 'allowed',
    });

    const recent = await t.repos.audit.listRecent();
    expect(recent.map((e) => e.actor)).toEqual(['cli:alice', 'telegram:7', 'telegram:42']);
    expect((await t.repos.audit.listRecent({ limit: 1 })).map((e) => e.actor)).toEqual([
      'cli:alice',
    ]);
    expect((await t.repos.audit.listRecent({ outcome: 'refused' }))[0]?.detail).toBe('not admin');
    expect((await t.repos.audit.listRecent({ since: 2_000_000 })).length).toBe(2);
    expect(
      (await t.repos.audit.listRecent({ actor: 'telegram:42', action: 'approve' })).length,
    ).toBe(1);
  });
});
