/** The runs list's query over bridge.db's index: filters, search, pages, counts. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunIndexStatus } from '../../../src/db/schema.ts';
import { DIALECT_NAMES, type DialectTestDb, testDbOn } from '../contract/dialects.ts';

describe.each(DIALECT_NAMES)('RunsRepo.search on %s', (dialect) => {
  const open = testDbOn(dialect);
  if (open === undefined) return;
  let t: DialectTestDb;
  beforeEach(async () => {
    t = await open();
    const statuses: RunIndexStatus[] = ['completed', 'failed', 'awaiting'];
    for (let i = 0; i < 30; i++) {
      await t.repos.runs.upsert({
        id: `2026-11-29T14${String(i).padStart(4, '0')}Z-run-${i}`,
        workflowId: i % 2 === 0 ? 'demo' : 'pabcd',
        workspace: `/srv/app-${i % 3}`,
        layout: 'native',
        status: statuses[i % 3]!,
        startedBy: `telegram:${i % 5}`,
        createdAt: 1000 + i,
        updatedAt: 1000 + i,
        spec: i === 7 ? 'Give the login page 50% more _contrast_' : `spec ${i}`,
      });
    }
  });
  afterEach(() => t.cleanup());

  it('pages newest first with the total', async () => {
    const first = await t.repos.runs.search({ limit: 10 });
    expect(first.total).toBe(30);
    expect(first.items.map((r) => r.id.slice(-6))).toEqual(
      [29, 28, 27, 26, 25, 24, 23, 22, 21, 20].map((i) => `run-${i}`.slice(-6)),
    );
    const last = await t.repos.runs.search({ limit: 10, offset: 25 });
    expect(last.items.map((r) => r.id.endsWith(`-run-${r.updatedAt - 1000}`))).toEqual(
      Array(5).fill(true),
    );
    expect(last.items.at(-1)!.id).toMatch(/-run-0$/);
  });

  it('combines filters; the count is of the matches, not of the page', async () => {
    const page = await t.repos.runs.search({
      status: 'failed',
      workflowId: 'pabcd',
      startedBy: 'telegram:1',
      limit: 50,
    });
    // failed: i%3==1; pabcd: odd; telegram:1: i%5==1 → i ∈ {1}; i=31 is out of range.
    expect(page.items.map((r) => r.id)).toEqual(['2026-11-29T140001Z-run-1']);
    expect(page.total).toBe(1);
    const ws = await t.repos.runs.search({ workspace: '/srv/app-2', limit: 3 });
    expect(ws.total).toBe(10);
    expect(ws.items).toHaveLength(3);
    expect(ws.items.every((r) => r.workspace === '/srv/app-2')).toBe(true);
  });

  it('searches ids and specs case-insensitively, with % and _ taken literally', async () => {
    expect(
      (await t.repos.runs.search({ text: 'RUN-12', limit: 50 })).items.map((r) => r.id),
    ).toEqual(['2026-11-29T140012Z-run-12']);
    const spec = await t.repos.runs.search({ text: 'login page 50%', limit: 50 });
    expect(spec.items.map((r) => r.spec)).toEqual(['Give the login page 50% more _contrast_']);
    // "%" and "_" are not wildcards: "5_%" matches nothing, "_contrast_" only run 7.
    expect((await t.repos.runs.search({ text: '5_%', limit: 50 })).total).toBe(0);
    expect((await t.repos.runs.search({ text: '_contrast_', limit: 50 })).total).toBe(1);
  });

  it('keeps the spec when a later upsert has none, and offers the filter values', async () => {
    const id = '2026-11-29T140007Z-run-7';
    await t.repos.runs.upsert({
      id,
      workflowId: 'pabcd',
      workspace: '/srv/app-1',
      layout: 'native',
      status: 'completed',
    });
    expect((await t.repos.runs.get(id))!.spec).toBe('Give the login page 50% more _contrast_');
    const facets = await t.repos.runs.facets();
    expect(facets.workflows).toEqual(['demo', 'pabcd']);
    expect(facets.workspaces).toEqual(['/srv/app-0', '/srv/app-1', '/srv/app-2']);
    expect(facets.startedBy).toHaveLength(5);
  });

  // The query plan is SQLite's (EXPLAIN QUERY PLAN); Postgres picks plans by its statistics.
  // Registered only for SQLite: for Postgres the case does not exist (not a skipped test).
  (dialect === 'sqlite' ? it : () => {})(
    'uses an index for each filter (no full scan of the runs table)',
    async () => {
      const db = t.db;
      if (db.dialect !== 'sqlite') return;
      const plans = [
        "select * from runs where workflow_id = 'demo' order by updated_at desc limit 50",
        "select * from runs where started_by = 'telegram:1' order by updated_at desc limit 50",
        "select * from runs where workspace = '/srv/app-1' order by updated_at desc limit 50",
        "select * from runs where status = 'failed' order by updated_at desc limit 50",
        'select * from runs order by updated_at desc, id desc limit 50',
      ].map((q) =>
        (db.sqlite.prepare(`explain query plan ${q}`).all() as { detail: string }[])
          .map((r) => r.detail)
          .join('; '),
      );
      for (const plan of plans) {
        expect(plan).toMatch(/USING INDEX/);
        expect(plan).not.toMatch(/USE TEMP B-TREE/);
      }
    },
  );
});
