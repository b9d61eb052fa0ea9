/**
 * Benchmark: what finished flow runs cost interrupted-session lookups (issue 14). Two homes, each
 * with one workspace holding one blocked flow run (the session to offer), one of them also with
 * 5,000 finished flow runs (`.flow/runs/<id>/run.yaml`, completed or cancelled, written by "flow"
 * an hour ago):
 *   list_ms:  wall time of `phasebridge sessions list --workspace WS` (no bridge running), after
 *             one first call that fills bridge.db's status cache (`list_first_ms`, once);
 *   offer_ms: spawn of `phasebridge serve` → the offer of the blocked run in a fake Telegram chat
 *             bound to the workspace (a fresh chat each sample, so no earlier copy stops it);
 *   scan_ms:  in-process findInterruptedSessions over the workspace with the cache and without
 *             it (what every lookup cost before the cache).
 * Goal: list_ms and offer_ms with 5,000 finished runs ≤ 1.2 × the figure without them.
 * Samples of the two homes are interleaved so load changes hit both alike.
 *
 * Run: npx tsx bench/sessions.ts [--runs 5] [--finished 5000]
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { migrateToLatest, openBridgeDb } from '../src/db/connection.ts';
import { createRepositories } from '../src/db/repositories/index.ts';
import { findInterruptedSessions } from '../src/jobs/orchestrator/sessions.ts';
import { FakeTelegram } from '../test/fakes/telegram.ts';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const arg = (name: string): string | undefined => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const RUNS = Number(arg('runs') ?? 5);
const FINISHED = Number(arg('finished') ?? 5000);
const ENTRY = 'dist/main.js';
const GOAL_RATIO = 1.2;
const HOUR_AGO = new Date(Date.now() - 3_600_000);

/** A FlowRun as flow writes it (seed 003), with `status` and a few activities. */
function runYaml(id: string, status: string, reason?: string): string {
  return `apiVersion: flow.synapti.ai/v1
kind: FlowRun
metadata:
  id: ${id}
  workflow: start-issue
  created_at: "2026-05-20T14:30:00Z"
context:
  repo: acme/shop
  branch: issue-${id.slice(-4)}
state:
  status: ${status}
  current_phase: pr
  completed_activities:
    - preflight
    - explore
    - plan
    - code
    - verify
    - pr
  current_activity: pr
${reason ? `  blocked_reason: ${reason}\n` : ''}events:
  - at: "2026-05-20T14:30:00Z"
    type: run_started
`;
}

function writeRun(ws: string, id: string, text: string): void {
  const dir = path.join(ws, '.flow', 'runs', id);
  fs.mkdirSync(path.join(dir, 'activities'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'run.yaml'), text);
  fs.writeFileSync(path.join(dir, 'events.jsonl'), '{"type":"run_started"}\n');
  fs.utimesSync(path.join(dir, 'run.yaml'), HOUR_AGO, HOUR_AGO);
}

interface Home {
  dir: string;
  home: string;
  ws: string;
  finished: number;
}

async function prepare(finished: number): Promise<Home> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `pb-bench-sessions-${finished}-`));
  const home = path.join(dir, 'home');
  const ws = path.join(dir, 'ws');
  fs.mkdirSync(home, { recursive: true, mode: 0o700 });
  fs.mkdirSync(ws);
  writeRun(ws, '2026-06-01T000000Z-blocked', runYaml('blocked', 'blocked', 'verify failed'));
  for (let i = 0; i < finished; i++) {
    const id = `2026-05-${String(1 + (i % 28)).padStart(2, '0')}T${String(i).padStart(6, '0')}Z-issue-${i}`;
    writeRun(ws, id, runYaml(id, i % 10 === 0 ? 'cancelled' : 'completed'));
  }
  const db = openBridgeDb({ file: path.join(home, 'bridge.db') });
  await migrateToLatest(db);
  await db.close();
  return { dir, home, ws, finished };
}

function env(h: Home, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: h.dir,
    PHASEBRIDGE_HOME: h.home,
    PHASEBRIDGE_PORT: '0',
    LOG_LEVEL: 'warn',
    ...extra,
  };
}

/** Wall time of `sessions list` (no bridge running); checks the blocked run is listed. */
function timeList(h: Home): number {
  const t0 = performance.now();
  const res = spawnSync(
    process.execPath,
    [path.join(repo, ENTRY), 'sessions', 'list', '--workspace', h.ws],
    { cwd: h.dir, env: env(h), encoding: 'utf8' },
  );
  const ms = performance.now() - t0;
  if (res.status !== 0 || !res.stdout.includes('blocked')) {
    throw new Error(`sessions list exited ${res.status}: ${res.stdout}${res.stderr}`);
  }
  return Number(ms.toFixed(1));
}

let nextChat = -100_100;

/** serve → the blocked run's offer in a fresh Telegram chat bound to the workspace. */
async function timeOffer(h: Home, fake: FakeTelegram): Promise<number> {
  const chatId = nextChat--;
  fake.addChat({ id: chatId, type: 'supergroup', title: `Team ${chatId}` });
  const db = openBridgeDb({ file: path.join(h.home, 'bridge.db') });
  const repos = createRepositories(db);
  for (const b of await repos.bindings.list()) await repos.bindings.remove(b.chatRef);
  await repos.bindings.bind({ chatRef: `telegram:${chatId}`, workspace: h.ws });
  await db.close();
  let output = '';
  const t0 = performance.now();
  const child: ChildProcess = spawn(process.execPath, [path.join(repo, ENTRY), 'serve'], {
    cwd: h.dir,
    env: env(h, { TELEGRAM_BOT_TOKEN: fake.token, TELEGRAM_API_ROOT: fake.apiRoot }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.on('data', (d: Buffer) => {
    output += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    output += d.toString();
  });
  try {
    const deadline = Date.now() + 60_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`serve exited ${child.exitCode}:\n${output}`);
      if (Date.now() > deadline) throw new Error(`no offer in 60 s:\n${output}`);
      const offer = fake
        .botMessages(chatId)
        .find((m) => /Interrupted flow session/.test(m.text ?? ''));
      if (offer) break;
      await new Promise((r) => setTimeout(r, 5));
    }
    return Number((performance.now() - t0).toFixed(1));
  } finally {
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGTERM');
    await exited;
  }
}

/** In-process lookup time over the workspace, with and without the cache (medians). */
async function timeScan(h: Home): Promise<{ cached_ms: number; uncached_ms: number }> {
  const db = openBridgeDb({ file: path.join(h.home, 'bridge.db') });
  const cache = createRepositories(db).flowRunCache;
  const time = async (fn: () => Promise<unknown>) => {
    const t0 = performance.now();
    await fn();
    return performance.now() - t0;
  };
  try {
    const cached: number[] = [];
    const uncached: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      cached.push(await time(() => findInterruptedSessions(h.ws, cache)));
      uncached.push(await time(() => findInterruptedSessions(h.ws)));
    }
    return { cached_ms: median(cached), uncached_ms: median(uncached) };
  } finally {
    await db.close();
  }
}

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return Number((s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2).toFixed(1));
}

const build = spawnSync(process.execPath, [path.join(repo, 'scripts', 'build.mjs'), '--if-stale'], {
  stdio: ['ignore', 'ignore', 'inherit'],
});
if (build.status !== 0) throw new Error(`scripts/build.mjs failed (exit ${build.status})`);
const loadAtStart = Number(os.loadavg()[0]!.toFixed(2));
const homes = [await prepare(0), await prepare(FINISHED)];
const fake = await FakeTelegram.start();
try {
  // The first lookup fills the cache (every run.yaml read once): timed once, apart.
  const first = homes.map((h) => timeList(h));
  const samples = homes.map(() => ({ list: [] as number[], offer: [] as number[] }));
  for (let i = 0; i < RUNS; i++) {
    for (const [k, h] of homes.entries()) {
      samples[k]!.list.push(timeList(h));
      samples[k]!.offer.push(await timeOffer(h, fake));
    }
  }
  const figures = [];
  for (const [k, h] of homes.entries()) {
    const s = samples[k]!;
    figures.push({
      finished_flow_runs: h.finished,
      list_first_ms: first[k]!,
      list_ms: { median: median(s.list), samples: s.list },
      offer_ms: { median: median(s.offer), samples: s.offer },
      scan_ms: await timeScan(h),
    });
  }
  const [empty, full] = figures as [(typeof figures)[0], (typeof figures)[0]];
  const ratio = (a: number, b: number) => Number((b / a).toFixed(2));
  const ratios = {
    list_ms: ratio(empty.list_ms.median, full.list_ms.median),
    offer_ms: ratio(empty.offer_ms.median, full.offer_ms.median),
  };
  console.log(
    JSON.stringify(
      {
        bench: 'sessions',
        node: process.version,
        cpus: os.cpus().length,
        entry: ENTRY,
        load_avg_1m: { start: loadAtStart, end: Number(os.loadavg()[0]!.toFixed(2)) },
        runs: RUNS,
        empty,
        with_finished: full,
        ratios,
        goal: { max_ratio: GOAL_RATIO },
        goals_met: Object.values(ratios).every((r) => r <= GOAL_RATIO),
      },
      null,
      2,
    ),
  );
} finally {
  await fake.close();
  for (const h of homes) fs.rmSync(h.dir, { recursive: true, force: true });
}
