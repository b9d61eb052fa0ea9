/** The runs pages over real HTTP, reading a real demo run of the real Orchestrator. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { orchestratorRunsSource } from '../../../src/bridges/web/index.ts';
import { escapeHtml } from '../../../src/bridges/web/outbound.ts';
import { type BridgeDb, migrateToLatest, openBridgeDb } from '../../../src/db/connection.ts';
import type { RunState } from '../../../src/engine/model.ts';
import { Orchestrator } from '../../../src/jobs/orchestrator/index.ts';
import type { JobQueue } from '../../../src/jobs/queue/port.ts';
import { createSqliteQueue } from '../../../src/jobs/queue/sqlite-driver.ts';
import { createLogger } from '../../../src/log.ts';
import { type Browser, login, startConsole, type TestConsole } from './support.ts';

process.env.DEMO_AGENT_BEHAVIOUR = 'sleep=20';

let dir: string;
let db: BridgeDb;
let queue: JobQueue;
let orchestrator: Orchestrator;
let run: RunState;
let c: TestConsole;
let b: Browser;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-web-runs-'));
  const workspace = path.join(dir, 'ws');
  fs.mkdirSync(workspace);
  db = openBridgeDb({ file: path.join(dir, 'home', 'bridge.db') });
  await migrateToLatest(db);
  queue = createSqliteQueue({ db, pollMs: 30 });
  orchestrator = await Orchestrator.create({
    db,
    queue,
    log: createLogger({ level: 'silent' }),
    home: path.join(dir, 'home'),
  });
  const started = await orchestrator.startRun({
    workflow: 'demo',
    workspace,
    spec: 'Add login <b>now</b>',
    actor: { id: 'web:admin', name: 'admin' },
  });
  run = await orchestrator.waitUntilIdle(started.id);
  c = await startConsole({ channel: { runs: orchestratorRunsSource(orchestrator) } });
  b = await login(c);
});

afterAll(async () => {
  await c?.dispose();
  await orchestrator?.close();
  await queue?.close();
  await db?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const get = async (p: string) => {
  const res = await fetch(`${c.base}${p}`, { headers: { cookie: b.cookie } });
  return { status: res.status, text: await res.text() };
};

describe('runs pages', () => {
  it('lists the runs', async () => {
    const { status, text } = await get('/runs');
    expect(status).toBe(200);
    expect(text).toContain(`href="/runs/${run.id}"`);
    expect(text).toContain('awaiting');
  });

  it("shows a run's steps with times, tokens and cost, and its ledger", async () => {
    expect(run.status).toBe('awaiting');
    const { status, text } = await get(`/runs/${run.id}`);
    expect(status).toBe(200);
    const plan = run.steps[0]!;
    expect(text).toContain('>plan<');
    expect(text).toContain(plan.telemetry.tokensOut.toLocaleString('en-US'));
    expect(text).toContain(`href="/runs/${run.id}/logs/plan?attempt=1"`);
    // The open checkpoint with the answers it offers, as a form.
    expect(text).toContain('Checkpoint plan:1');
    expect(text).toMatch(/<button type="submit" name="action" value="approve"[^>]*>Approve</);
    expect(text).toMatch(/value="reject"[^>]*>Reject</);
    // Request changes is offered at every checkpoint after a step (loop max 3 by default).
    expect(text).toMatch(/value="changes"[^>]*>Request changes</);
    // The spec is user text: escaped.
    expect(text).toContain('Add login &lt;b&gt;now&lt;/b&gt;');
    expect(text).not.toContain('<b>now</b>');
    // Ledger rows: the start command and the job that ran plan.
    expect(text).toContain('runStarted');
    expect(text).toContain('stepFinished');
    expect(text).toContain('stepCompleted, checkpointOpened');
    // A run that can still change follows its event stream (no reloading).
    expect(text).toContain('data-live="1"');
    expect(text).not.toContain('http-equiv="refresh"');
  });

  it("shows the tail of a step's log", async () => {
    const logFile = await orchestrator.logPath(run.id, 'plan');
    const logText = fs.readFileSync(logFile, 'utf8');
    const lastLine = logText.trim().split('\n').at(-1)!;
    const { status, text } = await get(`/runs/${run.id}/logs/plan`);
    expect(status).toBe(200);
    expect(text).toContain(escapeHtml(lastLine));
  });

  it('answers 404 for unknown runs, steps and malformed ids', async () => {
    expect((await get('/runs/2020-01-01T000000Z-nope')).status).toBe(404);
    expect((await get(`/runs/${run.id}/logs/nope`)).status).toBe(404);
    expect((await get('/runs/..%2F..%2Fetc')).status).toBe(404);
    expect((await get('/runs/%E0%A4%A')).status).toBe(404);
  });

  it('refuses a traversing run id before any run lookup or file path is built', async () => {
    // A reader that would serve ANY id, so only the id check can produce the 404.
    const asked: string[] = [];
    const real = orchestratorRunsSource(orchestrator);
    const open = await startConsole({
      channel: {
        runs: {
          ...real,
          getRun: async (id) => {
            asked.push(id);
            return real.getRun(run.id);
          },
        },
      },
    });
    try {
      const browser = await login(open);
      for (const p of ['/runs/..%2F..%2Fetc', '/runs/..%2F..%2Fetc/logs/plan', '/runs/a%2Fb']) {
        const res = await fetch(`${open.base}${p}`, { headers: { cookie: browser.cookie } });
        expect(res.status, p).toBe(404);
      }
      expect(asked).toEqual([]);
    } finally {
      await open.dispose();
    }
  });

  it('needs the session', async () => {
    expect((await fetch(`${c.base}/runs/${run.id}`)).status).toBe(401);
  });
});
