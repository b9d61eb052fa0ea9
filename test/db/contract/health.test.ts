/**
 * What `/readyz` and `/metrics` read of bridge.db answers the same on SQLite and Postgres: the
 * probe answers while the database does and throws once it is gone, and run counts by status
 * follow the runs index.
 */
import { describe, expect, it } from 'vitest';
import { bridgeDbAnswers, countsBy } from '../../../src/db/health.ts';
import { DIALECT_NAMES, useContractDb } from './dialects.ts';

const run = (id: string, status: 'active' | 'awaiting' | 'completed') => ({
  id,
  workflowId: 'demo',
  workspace: '/ws',
  layout: 'native' as const,
  status,
});

describe.each(DIALECT_NAMES)('bridge.db health on %s', (dialect) => {
  const t = useContractDb(dialect);
  if (t === undefined) return;

  it('the readiness probe answers, and fails once the database is closed', async () => {
    const { db } = t();
    expect(await bridgeDbAnswers(db)).toBe(true);
    await db.close();
    await expect(bridgeDbAnswers(db)).rejects.toThrow();
  });

  it('counts runs by status for /metrics', async () => {
    const { db, repos } = t();
    expect(await countsBy(db, 'runs', 'status')).toEqual({});
    await repos.runs.upsert(run('2026-01-01T000000Z-a', 'active'));
    await repos.runs.upsert(run('2026-01-01T000000Z-b', 'active'));
    await repos.runs.upsert(run('2026-01-01T000000Z-c', 'completed'));
    expect(await countsBy(db, 'runs', 'status')).toEqual({ active: 2, completed: 1 });
  });
});
