/**
 * The console's log and run pages read files from workspaces, which agents control: a link an
 * agent plants in place of a log (or the logs folder, or the ledger) is refused with a notice
 * naming it, and the file it points at is never shown. Real Orchestrator, real HTTP.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { orchestratorRunsSource } from '../../../src/bridges/web/index.ts';
import { type BridgeDb, migrateToLatest, openBridgeDb } from '../../../src/db/connection.ts';
import type { RunState } from '../../../src/engine/model.ts';
import { Orchestrator } from '../../../src/jobs/orchestrator/index.ts';
import type { JobQueue } from '../../../src/jobs/queue/port.ts';
import { createSqliteQueue } from '../../../src/jobs/queue/sqlite-driver.ts';
import { createLogger } from '../../../src/log.ts';
import { type Browser, login, startConsole, type TestConsole } from './support.ts';

process.env.DEMO_AGENT_BEHAVIOUR = 'sleep=20';

const SECRET = 'root:x:0:0:the-secret-line';

let dir: string;
let db: BridgeDb;
let queue: JobQueue;
let orchestrator: Orchestrator;
let c: TestConsole;
let b: Browser;

/** A demo run in its own workspace, waiting at its first checkpoint. */
async function demoRun(name: string): Promise<RunState> {
  const workspace = path.join(dir, name);
  fs.mkdirSync(workspace);
  const started = await orchestrator.startRun({
    workflow: 'demo',
    workspace,
    spec: name,
    actor: { id: 'web:admin', name: 'admin' },
  });
  return orchestrator.waitUntilIdle(started.id);
}

/** Replaces `at` (file or folder) with a symlink to `target`, as an agent would. */
function plant(at: string, target: string): void {
  fs.rmSync(at, { recursive: true, force: true });
  fs.symlinkSync(target, at);
}

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-web-untrusted-'));
  db = openBridgeDb({ file: path.join(dir, 'home', 'bridge.db') });
  await migrateToLatest(db);
  queue = createSqliteQueue({ db, pollMs: 30 });
  orchestrator = await Orchestrator.create({
    db,
    queue,
    log: createLogger({ level: 'silent' }),
    home: path.join(dir, 'home'),
  });
  fs.writeFileSync(path.join(dir, 'secret.txt'), `${SECRET}\n`);
  fs.mkdirSync(path.join(dir, 'secrets'));
  fs.writeFileSync(path.join(dir, 'secrets', 'plan-1.log'), `${SECRET}\n`);
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

describe('runs pages over a workspace with planted links', () => {
  it("a step log replaced by a link: the notice names it, the target's text is not shown", async () => {
    const run = await demoRun('ws-log');
    const other = await demoRun('ws-other');
    const log = await orchestrator.logPath(run.id, 'plan');
    plant(log, path.join(dir, 'secret.txt'));
    const page = await get(`/runs/${run.id}/logs/plan`);
    expect(page.status).toBe(409);
    expect(page.text).toContain(`refusing to follow the symlink ${log} planted in the workspace`);
    expect(page.text).not.toContain('the-secret-line');
    // Another run's log is still shown.
    const fine = await get(`/runs/${other.id}/logs/plan`);
    expect(fine.status).toBe(200);
    expect(fine.text).toContain('demo-agent');
  });

  it('the logs folder replaced by a link: refused the same way', async () => {
    const run = await demoRun('ws-folder');
    const logs = path.dirname(await orchestrator.logPath(run.id, 'plan'));
    plant(logs, path.join(dir, 'secrets'));
    const page = await get(`/runs/${run.id}/logs/plan`);
    expect(page.status).toBe(409);
    expect(page.text).toContain(`refusing to follow the symlink ${logs} planted in the workspace`);
    expect(page.text).not.toContain('the-secret-line');
  });

  it("the ledger replaced by a link: the run page refuses it, the target's text is not shown", async () => {
    const run = await demoRun('ws-ledger');
    const ledger = path.join(run.workspace, '.phasebridge', 'runs', run.id, 'ledger.jsonl');
    plant(ledger, path.join(dir, 'secret.txt'));
    const page = await get(`/runs/${run.id}`);
    expect(page.status).toBe(409);
    expect(page.text).toContain(
      `refusing to follow the symlink ${ledger} planted in the workspace`,
    );
    expect(page.text).not.toContain('the-secret-line');
  });
});
