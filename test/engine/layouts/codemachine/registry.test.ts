import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { codemachinePaths } from '../../../../src/engine/layouts/codemachine/paths.ts';
import {
  type AgentRunRow,
  RegistryDb,
  registerAgentRun,
} from '../../../../src/engine/layouts/codemachine/registry-db.ts';
import { applyRegistryEvents } from '../../../../src/engine/layouts/codemachine/registry-projection.ts';
import { buildTemplate } from '../../../../src/engine/layouts/codemachine/template.ts';
import { RUN_ID } from './driver.ts';
import { type Harness, makeHarness } from './helpers.ts';

const STRAY = {
  jobId: 'other:run:1',
  runId: 'other',
  stepId: 'x',
  kind: 'step' as const,
  attempt: 1,
  name: 'x',
  status: 'completed' as const,
  prompt: 'p',
};
const TOKENS = { tokensIn: 1200, tokensOut: 340, cachedTokens: 800, costUsd: 0.0421 };

/** plan completes, build fails twice (retries exhausted) and is skipped, review is skipped mid-run. */
async function mixedRun(h: Harness): Promise<void> {
  const { d } = h;
  await d.start({ selectedTrack: 'quick' });
  await d.started('plan');
  await h.session('plan');
  await d.finished('plan', { action: 'continue' }, TOKENS);
  for (let i = 0; i < 2; i++) {
    await d.started('build');
    await h.session('build');
    await d.send({
      type: 'stepFailed',
      stepId: 'build',
      attempt: d.attempt('build'),
      error: 'exit code 3',
    });
  }
  expect(d.run.blocked?.kind).toBe('retries-exhausted');
  await d.send({ type: 'skip', reason: 'built by hand' });
  await d.started('review');
  await h.session('review');
  await d.send({ type: 'skip' });
}

/** The rows as a plain better-sqlite3 reader sees them. */
function plainRows(ws: string): AgentRunRow[] {
  const db = new Database(codemachinePaths(ws).registryDb, { readonly: true });
  try {
    return db.prepare('SELECT * FROM agent_runs ORDER BY id').all() as AgentRunRow[];
  } finally {
    db.close();
  }
}

describe('logs/registry.db', () => {
  let h: Harness;
  beforeEach(() => {
    h = makeHarness();
  });
  afterEach(async () => {
    await h.dispose();
  });

  it('records a completed, a failed and a skipped step, readable by plain better-sqlite3', async () => {
    await mixedRun(h);
    const rows = plainRows(h.ws);
    expect(rows.map((r) => [r.id, r.step_id, r.kind, r.attempt, r.status, r.error])).toEqual([
      [1, 'plan', 'step', 1, 'completed', null],
      [2, 'build', 'step', 1, 'failed', 'exit code 3'],
      [3, 'build', 'step', 2, 'failed', 'exit code 3'],
      [4, 'build', 'skip', expect.any(Number), 'skipped', null],
      [5, 'review', 'step', 1, 'skipped', null],
    ]);
    const plan = rows[0]!;
    expect(plan).toMatchObject({
      name: 'planner',
      prompt: 'Plan the change.',
      start: '2026-01-02T03:04:01.000Z',
      end: '2026-01-02T03:04:03.000Z',
      duration_ms: 2000,
      tokens_in: 1200,
      tokens_out: 340,
      cached_tokens: 800,
      cost: 0.0421,
      session_id: 'sess-plan-1',
      run_id: RUN_ID,
      log_path: '.codemachine/logs/agent-1-planner-2026-01-02T03-04-01.log',
    });
    expect(rows[4]!.duration_ms).toBeGreaterThan(0);
  });

  it('shows a skip as skipped while template.json marks the step complete', async () => {
    await mixedRun(h);
    const doc = buildTemplate(h.d.run);
    expect(Object.keys(doc.completedSteps!)).toEqual(['0', '1', '3']);
    expect(doc.completedSteps!['3']).toMatchObject({ sessionId: 'sess-review-1', monitoringId: 5 });
    expect(doc.completedSteps!['3']!.completedAt).toBeDefined();
    expect(h.d.run.status).toBe('completed');
  });

  it("keeps CodeMachine's own tables: agents joined with telemetry", async () => {
    await mixedRun(h);
    const db = new Database(codemachinePaths(h.ws).registryDb, { readonly: true });
    try {
      const row = db
        .prepare(
          'SELECT a.name, a.engine, a.status, a.start_time, a.end_time, a.duration, t.tokens_in, t.cost FROM agents a LEFT JOIN telemetry t ON a.id = t.agent_id WHERE a.id = 1',
        )
        .get();
      expect(row).toEqual({
        name: 'planner',
        engine: null,
        status: 'completed',
        start_time: '2026-01-02T03:04:01.000Z',
        end_time: '2026-01-02T03:04:03.000Z',
        duration: 2000,
        tokens_in: 1200,
        cost: 0.0421,
      });
    } finally {
      db.close();
    }
  });

  it("ends the running attempt failed with the pause as its error (the seed's statuses)", async () => {
    await h.d.start();
    await h.d.started('plan');
    await h.d.send({ type: 'pause' });
    expect(plainRows(h.ws).map((r) => [r.status, r.error])).toEqual([
      ['failed', 'paused: paused by alice'],
    ]);
  });

  it('gives a redelivered job the same monitoringId and log path', async () => {
    await h.d.start();
    await h.d.started('plan');
    const job = {
      jobId: `${RUN_ID}:plan:1`,
      runId: RUN_ID,
      stepId: 'plan',
      kind: 'step' as const,
      attempt: 1,
      name: 'planner',
      start: '2026-01-02T03:04:01.000Z',
      prompt: 'Plan the change.',
    };
    const first = registerAgentRun(h.ws, job);
    expect(registerAgentRun(h.ws, job)).toEqual(first);
    expect(first.logPath).toBe(
      path.join(h.ws, '.codemachine/logs/agent-1-planner-2026-01-02T03-04-01.log'),
    );
    expect(plainRows(h.ws)).toHaveLength(1);
  });

  it('rebuilds from the whole ledger with the monitoringIds template.json names, once', async () => {
    await mixedRun(h);
    const before = plainRows(h.ws);
    const other = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-cm-rebuild-'));
    const db = RegistryDb.open(other);
    try {
      // A row made and deleted first: fresh AUTOINCREMENT ids would now be off by one.
      const stray = db.insert({ ...STRAY, start: '2026-01-01T00:00:00.000Z' });
      db.transaction(() => db.rekey(stray, 99));
      new Database(db.file).prepare('DELETE FROM agents WHERE id = 99').run();
      applyRegistryEvents(db, h.d.events, { state: h.d.run });
      applyRegistryEvents(db, h.d.events, { state: h.d.run });
      const rebuilt = db.list();
      expect(rebuilt.map((r) => [r.id, r.status])).toEqual(before.map((r) => [r.id, r.status]));
      expect(rebuilt.map((r) => r.tokens_in)).toEqual(before.map((r) => r.tokens_in));
    } finally {
      db.close();
      fs.rmSync(other, { recursive: true, force: true });
    }
  });
});

describe('a registry.db created by CodeMachine', () => {
  let ws: string;
  beforeEach(() => {
    ws = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-cm-old-'));
  });
  afterEach(() => {
    fs.rmSync(ws, { recursive: true, force: true });
  });

  it('is upgraded to allow skipped, keeping its rows and telemetry', () => {
    const file = codemachinePaths(ws).registryDb;
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const old = new Database(file);
    old.exec(`
      CREATE TABLE agents (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL, engine TEXT,
        status TEXT NOT NULL CHECK(status IN ('running', 'completed', 'failed', 'paused')),
        parent_id INTEGER REFERENCES agents(id) ON DELETE CASCADE, pid INTEGER,
        start_time TEXT NOT NULL, end_time TEXT, duration INTEGER, prompt TEXT NOT NULL,
        log_path TEXT NOT NULL, error TEXT, engine_provider TEXT, model_name TEXT,
        created_at TEXT DEFAULT CURRENT_TIMESTAMP, updated_at TEXT DEFAULT CURRENT_TIMESTAMP);
      CREATE TABLE telemetry (agent_id INTEGER PRIMARY KEY REFERENCES agents(id) ON DELETE CASCADE,
        tokens_in INTEGER DEFAULT 0, tokens_out INTEGER DEFAULT 0, cached_tokens INTEGER DEFAULT 0,
        cost REAL, cache_creation_tokens INTEGER, cache_read_tokens INTEGER);
      INSERT INTO agents (name, engine, status, start_time, prompt, log_path)
        VALUES ('old-agent', 'claude', 'completed', '2025-01-01T00:00:00.000Z', 'p', 'x.log');
      INSERT INTO telemetry (agent_id, tokens_in) VALUES (1, 7);`);
    old.close();

    const db = RegistryDb.open(ws);
    try {
      const id = db.insert({
        jobId: 'r:s:skip@1',
        runId: 'r',
        stepId: 's',
        kind: 'skip',
        attempt: 1,
        name: 'coder',
        status: 'skipped',
        start: '2026-01-02T03:04:05.000Z',
        prompt: 'p',
      });
      expect(id).toBe(2);
      expect(db.list().map((r) => [r.name, r.status, r.tokens_in])).toEqual([
        ['old-agent', 'completed', 7],
        ['coder', 'skipped', 0],
      ]);
    } finally {
      db.close();
    }
  });
});
