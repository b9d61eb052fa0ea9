/** The runs list's query over bridge.db's index: filters, search, keyed pages, capped counts. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RUN_COUNT_CAP } from '../../../src/db/repositories/runs-search.ts';
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
        originChat: `telegram:-10${i % 2}`,
        createdAt: 1000 + i,
        updatedAt: 1000 + i,
        spec: i === 7 ? 'Give the login page 50% more _contrast_' : `spec ${i}`,
      });
    }
  });
  afterEach(() => t.cleanup());

  it('pages newest first by key: Older then Newer give back the same pages', async () => {
    const first = await t.repos.runs.search({ limit: 10 });
    expect(first.total).toBe(30);
    expect(first.hasNewer).toBe(false);
    expect(first.hasOlder).toBe(true);
    expect(first.items.map((r) => r.id.slice(-6))).toEqual(
      [29, 28, 27, 26, 25, 24, 23, 22, 21, 20].map((i) => `run-${i}`.slice(-6)),
    );
    const edge = (r: { updatedAt: number; id: string }) => ({ updatedAt: r.updatedAt, id: r.id });
    const second = await t.repos.runs.search({ limit: 10, before: edge(first.items.at(-1)!) });
    expect(second.items.map((r) => r.updatedAt - 1000)).toEqual([
      19, 18, 17, 16, 15, 14, 13, 12, 11, 10,
    ]);
    expect([second.hasNewer, second.hasOlder]).toEqual([true, true]);
    const third = await t.repos.runs.search({ limit: 10, before: edge(second.items.at(-1)!) });
    expect(third.items.at(-1)!.id).toMatch(/-run-0$/);
    expect([third.hasNewer, third.hasOlder]).toEqual([true, false]);
    const back = await t.repos.runs.search({ limit: 10, after: edge(third.items[0]!) });
    expect(back.items.map((r) => r.id)).toEqual(second.items.map((r) => r.id));
    expect([back.hasNewer, back.hasOlder]).toEqual([true, true]);
    const top = await t.repos.runs.search({ limit: 10, after: edge(back.items[0]!) });
    expect(top.items.map((r) => r.id)).toEqual(first.items.map((r) => r.id));
    expect(top.hasNewer).toBe(false);
  });

  it('orders runs updated in the same millisecond by id, none lost between pages', async () => {
    for (let i = 0; i < 5; i++) {
      await t.repos.runs.upsert({
        id: `same-${i}`,
        workflowId: 'tie',
        workspace: '/srv/tie',
        layout: 'native',
        status: 'completed',
        updatedAt: 5000,
      });
    }
    const seen: string[] = [];
    let page = await t.repos.runs.search({ workflowId: 'tie', limit: 2 });
    seen.push(...page.items.map((r) => r.id));
    while (page.hasOlder) {
      const last = page.items.at(-1)!;
      page = await t.repos.runs.search({
        workflowId: 'tie',
        limit: 2,
        before: { updatedAt: last.updatedAt, id: last.id },
      });
      seen.push(...page.items.map((r) => r.id));
    }
    expect(seen).toEqual(['same-4', 'same-3', 'same-2', 'same-1', 'same-0']);
  });

  it('counts at most RUN_COUNT_CAP matches and says more match', async () => {
    const rows = Array.from({ length: RUN_COUNT_CAP + 5 }, (_, i) => ({
      id: `bulk-${i}`,
      workflow_id: 'bulk',
      workspace: '/srv/bulk',
      layout: 'native',
      status: 'completed' as const,
      created_at: 1,
      updated_at: 10 + i,
    }));
    // Kysely over either dialect; in chunks, under Postgres's bound-parameter limit.
    for (let i = 0; i < rows.length; i += 200) {
      await t.db.kysely
        .insertInto('runs')
        .values(rows.slice(i, i + 200))
        .execute();
    }
    const page = await t.repos.runs.search({ workflowId: 'bulk', limit: 50 });
    expect(page.total).toBe(RUN_COUNT_CAP);
    expect(page.totalCapped).toBe(true);
    expect(page.items).toHaveLength(50);
  });

  it('filters by origin chat, person waiting, and age or idleness', async () => {
    const chat = await t.repos.runs.search({ originChat: 'telegram:-101', limit: 50 });
    expect(chat.total).toBe(15);
    expect(chat.items.every((r) => r.originChat === 'telegram:-101')).toBe(true);
    // Waiting: awaiting (i%3==2) or blocked, started by telegram:2 (i%5==2) → i ∈ {2, 17}.
    const waiting = await t.repos.runs.search({ waitingFor: 'telegram:2', limit: 50 });
    expect(waiting.items.map((r) => r.updatedAt - 1000)).toEqual([17, 2]);
    expect(
      (await t.repos.runs.search({ waitingFor: 'telegram:2', status: 'completed', limit: 50 }))
        .total,
    ).toBe(0);
    const recent = await t.repos.runs.search({ updatedSince: 1025, limit: 50 });
    expect(recent.items.map((r) => r.updatedAt - 1000)).toEqual([29, 28, 27, 26, 25]);
    const idle = await t.repos.runs.search({ updatedBefore: 1003, limit: 50 });
    expect(idle.items.map((r) => r.updatedAt - 1000)).toEqual([2, 1, 0]);
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
    // A search is counted over its page only (counting would read every run's spec).
    const paged = await t.repos.runs.search({ text: 'spec', limit: 10 });
    expect([paged.total, paged.totalCapped, paged.hasOlder]).toEqual([10, true, true]);
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
    expect(facets.chats).toEqual(['telegram:-100', 'telegram:-101']);
  });

  // The query plan is SQLite's (EXPLAIN QUERY PLAN); Postgres picks plans by its statistics.
  // Registered only for SQLite: for Postgres the case does not exist (not a skipped test).
  (dialect === 'sqlite' ? it : () => {})(
    'reads each filter and each keyed page from an index, never sorting or scanning',
    async () => {
      const db = t.db;
      if (db.dialect !== 'sqlite') return;
      const key = "(updated_at, id) < (1010, 'x')";
      const plans = [
        "select * from runs where workflow_id = 'demo' order by updated_at desc, id desc limit 51",
        "select * from runs where started_by = 'telegram:1' order by updated_at desc, id desc limit 51",
        "select * from runs where workspace = '/srv/app-1' order by updated_at desc, id desc limit 51",
        "select * from runs where status = 'failed' order by updated_at desc, id desc limit 51",
        "select * from runs where origin_chat = 'telegram:-101' order by updated_at desc, id desc limit 51",
        `select * from runs where status = 'failed' and ${key} order by updated_at desc, id desc limit 51`,
        `select * from runs where ${key} order by updated_at desc, id desc limit 51`,
        "select * from runs where status in ('awaiting', 'blocked') and +started_by = 'telegram:1' order by updated_at desc, id desc limit 51",
      ].map((q) =>
        (db.sqlite.prepare(`explain query plan ${q}`).all() as { detail: string }[])
          .map((r) => r.detail)
          .join('; '),
      );
      for (const plan of plans) {
        expect(plan).toMatch(/USING (COVERING )?INDEX/);
        expect(plan).not.toMatch(/SCAN runs$|SCAN runs;/);
      }
      // The single-filter and keyed pages are read in order (no sort at all).
      for (const plan of plans.slice(0, 7)) expect(plan).not.toMatch(/USE TEMP B-TREE/);
      // Person waiting reads the live statuses' index, not the starter's history.
      expect(plans[7]).toMatch(/runs_status_key_idx/);
    },
  );
});
