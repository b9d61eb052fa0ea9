/**
 * Retention on both dialects: finished jobs of finished runs go after their retention (the latest
 * outcome's holder stays), old audit rows are exported as JSON Lines and then deleted, and a dry
 * run changes nothing. Job rows are written as the queue writes them (the embedded queue itself
 * is SQLite's; test/db/retention.test.ts runs it for real).
 */
import fs, { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { pruneBridgeDb } from '../../../src/db/retention.ts';
import type { JobState } from '../../../src/db/schema.ts';
import { DIALECT_NAMES, useContractDb } from './dialects.ts';

const DAY = 86_400_000;
const POLICY = { jobsMs: 30 * DAY, auditMs: 365 * DAY };
const NOW = Date.parse('2026-06-01T00:00:00Z');
const DONE = '2026-01-01T000000Z-done';
const OPEN = '2026-01-01T000000Z-open';

describe.each(DIALECT_NAMES)('pruneBridgeDb on %s', (dialect) => {
  const t = useContractDb(dialect);
  if (t === undefined) return;
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'pb-retention-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));
  const exportDir = () => path.join(dir, 'audit');

  let seq = 0;
  async function job(runId: string, stepId: string, state: JobState, finishedAt: number | null) {
    seq += 1;
    await t!()
      .db.kysely.insertInto('jobs')
      .values({
        id: `${runId}:${stepId}:1`,
        run_id: runId,
        step_id: stepId,
        attempt: 1,
        state,
        payload_json: '{}',
        available_at: 0,
        lease_owner: null,
        lease_expires_at: null,
        created_at: 0,
        started_at: null,
        finished_at: finishedAt,
        exit_code: null,
        tokens_in: null,
        tokens_out: null,
        cost_usd: null,
        error: null,
        result_json: null,
        cancel_requested_at: null,
        outcome_seq: finishedAt === null ? null : seq,
        signal_seq: seq,
        progress_json: null,
      })
      .execute();
  }
  const jobIds = async () =>
    (await t!().db.kysely.selectFrom('jobs').select('id').orderBy('id').execute()).map((r) => r.id);
  const run = (id: string, status: 'completed' | 'awaiting') =>
    t!().repos.runs.upsert({ id, workflowId: 'demo', workspace: '/ws', layout: 'native', status });

  it('drops finished jobs of finished runs after the retention, keeps the rest', async () => {
    const { db } = t();
    await run(DONE, 'completed');
    await run(OPEN, 'awaiting');
    const old = NOW - 40 * DAY;
    await job(DONE, 'plan', 'completed', old);
    await job(DONE, 'build', 'failed', old);
    await job(OPEN, 'plan', 'completed', old); // its run is unfinished: kept
    await job(OPEN, 'build', 'waiting', null);
    await job(DONE, 'last', 'completed', old); // holds the latest outcome and signal: kept
    const before = await jobIds();

    const early = await pruneBridgeDb(db, { policy: POLICY, exportDir: exportDir(), now: old });
    expect(early.jobs).toBe(0);
    const dry = await pruneBridgeDb(db, {
      policy: POLICY,
      exportDir: exportDir(),
      now: NOW,
      dryRun: true,
    });
    expect(dry.jobs).toBe(2);
    expect(await jobIds()).toEqual(before);

    const r = await pruneBridgeDb(db, { policy: POLICY, exportDir: exportDir(), now: NOW });
    expect(r.jobs).toBe(2);
    expect(await jobIds()).toEqual([`${DONE}:last:1`, `${OPEN}:build:1`, `${OPEN}:plan:1`]);
  });

  it('exports old audit rows as JSON Lines, then deletes exactly those', async () => {
    const { db, repos } = t();
    const old = Date.parse('2025-01-01T00:00:00Z');
    await repos.audit.record({
      at: old,
      actor: 'telegram:42',
      action: 'approve',
      outcome: 'allowed',
    });
    await repos.audit.record({
      at: old + 1000,
      actor: 'cli:bob',
      action: 'allow',
      outcome: 'refused',
      detail: 'not admin',
    });
    await repos.audit.record({
      at: NOW - DAY,
      actor: 'cli:alice',
      action: 'bind',
      outcome: 'allowed',
    });

    const dry = await pruneBridgeDb(db, {
      policy: POLICY,
      exportDir: exportDir(),
      now: NOW,
      dryRun: true,
    });
    expect(dry).toMatchObject({ audit: 2, auditExport: null });
    expect(fs.existsSync(exportDir())).toBe(false);

    const r = await pruneBridgeDb(db, { policy: POLICY, exportDir: exportDir(), now: NOW });
    expect(r.audit).toBe(2);
    const file = r.auditExport!;
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    const lines = fs
      .readFileSync(file, 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => [l.at, l.actor, l.detail])).toEqual([
      ['2025-01-01T00:00:00.000Z', 'telegram:42', null],
      ['2025-01-01T00:00:01.000Z', 'cli:bob', 'not admin'],
    ]);
    expect((await repos.audit.listRecent({ limit: 10 })).map((e) => e.actor)).toEqual([
      'cli:alice',
    ]);
    const again = await pruneBridgeDb(db, { policy: POLICY, exportDir: exportDir(), now: NOW });
    expect(again).toMatchObject({ audit: 0, auditExport: null });
    expect(fs.readdirSync(exportDir())).toEqual([path.basename(file)]);
  });
});
