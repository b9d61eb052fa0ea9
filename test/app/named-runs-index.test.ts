/**
 * Issue 29 on the console's runs list, over real HTTP with the bridge's own index (a real SQLite
 * file, the real Orchestrator): the "Started by" filter names each starter the way chat does,
 * the actor id only as the option's value, and filtering by it still finds their runs; the run
 * page's ledger rows name people the same way.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { namedRunsIndex } from '../../src/app/named-runs-index.ts';
import { orchestratorRunsSource } from '../../src/bridges/web/index.ts';
import { type BridgeDb, migrateToLatest, openBridgeDb } from '../../src/db/connection.ts';
import { createRepositories } from '../../src/db/repositories/index.ts';
import { Orchestrator } from '../../src/jobs/orchestrator/index.ts';
import type { JobQueue } from '../../src/jobs/queue/port.ts';
import { createSqliteQueue } from '../../src/jobs/queue/sqlite-driver.ts';
import { createLogger } from '../../src/log.ts';
import { type Browser, login, startConsole, type TestConsole } from '../bridges/web/support.ts';

process.env.DEMO_AGENT_BEHAVIOUR = 'sleep=20';

let dir: string;
let db: BridgeDb;
let queue: JobQueue;
let orchestrator: Orchestrator;
let c: TestConsole;
let b: Browser;
const ids: string[] = [];

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-started-by-'));
  const workspace = path.join(dir, 'ws');
  fs.mkdirSync(workspace);
  db = openBridgeDb({ file: path.join(dir, 'home', 'bridge.db') });
  await migrateToLatest(db);
  const repos = createRepositories(db);
  queue = createSqliteQueue({ db, pollMs: 30 });
  orchestrator = await Orchestrator.create({
    db,
    queue,
    log: createLogger({ level: 'silent' }),
    home: path.join(dir, 'home'),
  });
  // Carol was seen named in chat; U0DAVE never was (a thread reply carries the id only).
  await repos.people.remember({ id: 'telegram:3003', name: '@carol' });
  for (const actor of [{ id: 'telegram:3003' }, { id: 'slack:U0DAVE' }, { id: 'cli:erin' }]) {
    const started = await orchestrator.startRun({ workflow: 'demo', workspace, spec: 'x', actor });
    ids.push(started.id);
    await orchestrator.waitUntilIdle(started.id);
  }
  const index = namedRunsIndex(repos.runs, repos.people);
  c = await startConsole({ channel: { runs: orchestratorRunsSource(orchestrator, index) } });
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

/** The options of the "Started by" select, as [value, shown words]. */
const starterOptions = (html: string): string[][] => {
  const select = /<select name="by">([\s\S]*?)<\/select>/.exec(html)?.[1] ?? '';
  return [...select.matchAll(/<option value="([^"]*)"[^>]*>([^<]*)<\/option>/g)].map((m) => [
    m[1]!,
    m[2]!,
  ]);
};

describe('the runs list’s "Started by" filter', () => {
  it('shows each starter by name, the id only as the value', async () => {
    const { status, text } = await get('/runs');
    expect(status).toBe(200);
    expect(starterOptions(text)).toEqual([
      ['', 'any'],
      ['telegram:3003', '@carol'],
      ['cli:erin', 'erin'],
      ['slack:U0DAVE', 'slack:U0DAVE'],
    ]);
  });

  it('filters by the chosen person and keeps the choice selected', async () => {
    const { text } = await get(`/runs?by=${encodeURIComponent('telegram:3003')}`);
    expect(text).toContain(`href="/runs/${ids[0]}"`);
    expect(text).not.toContain(`href="/runs/${ids[1]}"`);
    expect(text).toContain('<option value="telegram:3003" selected>@carol</option>');
  });

  it('names the CLI starter by OS user in the run page’s ledger rows too', async () => {
    const { text } = await get(`/runs/${ids[2]}`);
    expect(text).toContain('<td data-label="By">erin</td>');
    expect(text).not.toContain('<td data-label="By">cli:erin</td>');
  });
});
