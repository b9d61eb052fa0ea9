/**
 * Benchmark: what history costs. The same three figures in a home with no finished runs and in
 * one with 5,000 completed runs (5 workspaces × 1,000), side by side, with their ratios:
 *   ready_ms:     spawn of `serve` → the first `/readyz` 200;
 *   idle_rss_mb:  the serve process's VmRSS 2 s after it was ready;
 *   run_ms / approve_ms: wall time of `phasebridge run <wf> --detach` and of
 *                 `phasebridge approve <run> --detach` (no bridge running: the CLI reconciles).
 * Goal: every ratio (5,000 / 0) ≤ 1.2.
 * The history is real: one run is driven to completion through the Orchestrator (ledger,
 * run.json, step logs, index row, queue jobs), then copied under fresh run ids (folder copied,
 * ids rewritten in its files; index and job rows copied in one transaction): the shape the engine
 * writes, in seconds instead of hours. Both homes also hold the same few awaiting runs to approve.
 * Samples of the two homes are interleaved so load changes hit both alike.
 *
 * Run: npx tsx bench/history.ts [--runs 5] [--completed 5000] [--entry dist|tsx]
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { migrateToLatest, openBridgeDb } from '../src/db/connection.ts';
import { newRunId } from '../src/engine/store/run-id.ts';
import { Orchestrator } from '../src/jobs/orchestrator/orchestrator.ts';
import { createJobQueue } from '../src/jobs/queue/create-queue.ts';
import { createLogger } from '../src/log.ts';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const arg = (name: string): string | undefined => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const RUNS = Number(arg('runs') ?? 5);
const COMPLETED = Number(arg('completed') ?? 5000);
const WORKSPACES = 5;
const ENTRY = arg('entry') === 'tsx' ? 'bin/phasebridge.js' : 'dist/main.js';
const IDLE_MS = 2000;
const GOAL_RATIO = 1.2;
process.env.DEMO_AGENT_BEHAVIOUR = 'sleep=0';

const WORKFLOW = `id: hist
steps:
  - id: plan
    agent: demo
    prompt: plan it
    checkpoint:
      when: after
  - id: build
    agent: demo
    prompt: build it
  - id: review
    agent: demo
    prompt: review it
`;

/** One prepared home. */
interface Home {
  dir: string;
  completed: number;
  /** Awaiting runs, one per approve sample. */
  awaiting: string[];
}

/** Drives `n` runs through the Orchestrator: one to completion, the rest to the checkpoint. */
async function seedHome(
  dir: string,
  awaitingRuns: number,
): Promise<{ done: string; awaiting: string[] }> {
  const home = path.join(dir, 'home');
  const ws = path.join(dir, 'ws0');
  fs.mkdirSync(path.join(home, 'workflows'), { recursive: true, mode: 0o700 });
  fs.writeFileSync(path.join(home, 'workflows', 'hist.workflow.yaml'), WORKFLOW);
  for (let w = 0; w < WORKSPACES; w++) fs.mkdirSync(path.join(dir, `ws${w}`), { recursive: true });
  const db = openBridgeDb({ file: path.join(home, 'bridge.db') });
  await migrateToLatest(db);
  const queue = await createJobQueue({ driver: 'sqlite', db });
  const o = await Orchestrator.create({
    db,
    queue,
    log: createLogger({ level: 'silent' }),
    home,
    worker: { concurrency: 1 },
  });
  const actor = { id: 'cli:bench' };
  try {
    const first = await o.startRun({ workflow: 'hist', workspace: ws, spec: 'history', actor });
    await o.waitUntilIdle(first.id);
    await o.command(first.id, 'bench:approve', {
      type: 'answerCheckpoint',
      answer: 'approve',
      actor,
    });
    const end = await o.waitUntilIdle(first.id);
    if (end.status !== 'completed') throw new Error(`template run ended ${end.status}`);
    const awaiting: string[] = [];
    for (let i = 0; i < awaitingRuns; i++) {
      const r = await o.startRun({ workflow: 'hist', workspace: ws, spec: `waiting ${i}`, actor });
      await o.waitUntilIdle(r.id);
      awaiting.push(r.id);
    }
    return { done: first.id, awaiting };
  } finally {
    await o.close();
    await queue.close();
    await db.close();
  }
}

/** Copies the completed template run `n` times under fresh ids across the workspaces. */
function copyHistory(dir: string, template: string, n: number): void {
  const src = path.join(dir, 'ws0', '.phasebridge', 'runs', template);
  const files = listFiles(src);
  const db = openBridgeDb({ file: path.join(dir, 'home', 'bridge.db') });
  const sqlite = db.sqlite;
  const row = sqlite.prepare('SELECT * FROM runs WHERE id = ?').get(template) as Record<
    string,
    unknown
  >;
  const jobs = sqlite.prepare('SELECT * FROM jobs WHERE run_id = ?').all(template) as Record<
    string,
    unknown
  >[];
  const insertRun = sqlite.prepare(
    `INSERT INTO runs (id, workflow_id, workspace, layout, status, started_by, origin_chat, created_at, updated_at, finished_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const jobCols = Object.keys(jobs[0] ?? {});
  const insertJob = sqlite.prepare(
    `INSERT INTO jobs (${jobCols.join(', ')}) VALUES (${jobCols.map(() => '?').join(', ')})`,
  );
  let seq = (sqlite.prepare('SELECT max(outcome_seq) AS s FROM jobs').get() as { s: number }).s;
  const base = Date.parse('2026-01-01T00:00:00Z');
  sqlite.transaction(() => {
    for (let i = 0; i < n; i++) {
      const at = new Date(base + i * 60_000);
      const id = newRunId(`history ${i}`, at);
      const ws = path.join(dir, `ws${i % WORKSPACES}`);
      const dest = path.join(ws, '.phasebridge', 'runs', id);
      for (const rel of files) {
        const text = fs.readFileSync(path.join(src, rel), 'utf8');
        const out = path.join(dest, rel);
        fs.mkdirSync(path.dirname(out), { recursive: true, mode: 0o700 });
        fs.writeFileSync(out, text.split(template).join(id).split(path.join(dir, 'ws0')).join(ws), {
          mode: 0o600,
        });
      }
      const t = at.getTime();
      insertRun.run(
        id,
        row.workflow_id,
        ws,
        row.layout,
        'completed',
        row.started_by,
        null,
        t,
        t + 5000,
        t + 5000,
      );
      for (const j of jobs) {
        const copy: Record<string, unknown> = {
          ...j,
          id: String(j.id).replace(template, id),
          run_id: id,
        };
        if (copy.outcome_seq !== null) copy.outcome_seq = ++seq;
        copy.signal_seq = null;
        insertJob.run(...jobCols.map((c) => (copy as Record<string, unknown>)[c]));
      }
    }
  })();
  sqlite.exec('VACUUM');
  void db.close();
}

function listFiles(dir: string, prefix = ''): string[] {
  const out: string[] = [];
  for (const d of fs.readdirSync(path.join(dir, prefix), { withFileTypes: true })) {
    const rel = path.join(prefix, d.name);
    if (d.isDirectory()) out.push(...listFiles(dir, rel));
    else if (d.isFile()) out.push(rel);
  }
  return out;
}

async function prepare(completed: number): Promise<Home> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `pb-bench-history-${completed}-`));
  const { done, awaiting } = await seedHome(dir, RUNS);
  if (completed > 0) copyHistory(dir, done, completed);
  return { dir, completed: completed + 1, awaiting };
}

function env(h: Home, port: number): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: h.dir,
    PHASEBRIDGE_HOME: path.join(h.dir, 'home'),
    PHASEBRIDGE_WORKSPACE: path.join(h.dir, 'ws0'),
    PHASEBRIDGE_PORT: String(port),
    LOG_LEVEL: 'warn',
    DEMO_AGENT_BEHAVIOUR: 'sleep=0',
    ...(ENTRY === 'bin/phasebridge.js' ? { PHASEBRIDGE_FROM_SOURCE: '1' } : {}),
  };
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function rssMb(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number((Number(/^VmRSS:\s+(\d+)\s+kB$/m.exec(status)?.[1]) / 1024).toFixed(1));
}

/** serve → /readyz, then RSS after IDLE_MS; stderr warnings are counted (healthy runs: none). */
async function measureServe(
  h: Home,
): Promise<{ readyMs: number; idleRssMb: number; warnings: string[] }> {
  const port = await freePort();
  let output = '';
  const t0 = performance.now();
  const child: ChildProcess = spawn(process.execPath, [path.join(repo, ENTRY), 'serve'], {
    cwd: h.dir,
    env: env(h, port),
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
      if (Date.now() > deadline) throw new Error(`not ready in 60 s:\n${output}`);
      const status = await fetch(`http://127.0.0.1:${port}/readyz`).then(
        (r) => r.status,
        () => 0,
      );
      if (status === 200) break;
      await new Promise((r) => setTimeout(r, 5));
    }
    const readyMs = performance.now() - t0;
    await new Promise((r) => setTimeout(r, IDLE_MS));
    const warnings = output.split('\n').filter((l) => /"level":(40|50)|WARN|ERROR/.test(l));
    return { readyMs: Number(readyMs.toFixed(1)), idleRssMb: rssMb(child.pid!), warnings };
  } finally {
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGTERM');
    await exited;
  }
}

/** Wall time of one CLI command (no bridge running). */
function timeCli(h: Home, args: string[]): number {
  const t0 = performance.now();
  const res = spawnSync(process.execPath, [path.join(repo, ENTRY), ...args], {
    cwd: h.dir,
    env: env(h, 0),
    encoding: 'utf8',
  });
  const ms = performance.now() - t0;
  if (res.status !== 0) throw new Error(`${args.join(' ')} exited ${res.status}: ${res.stderr}`);
  return Number(ms.toFixed(1));
}

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return Number((s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2).toFixed(1));
}

if (ENTRY === 'dist/main.js') {
  const build = spawnSync(
    process.execPath,
    [path.join(repo, 'scripts', 'build.mjs'), '--if-stale'],
    {
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  );
  if (build.status !== 0) throw new Error(`scripts/build.mjs failed (exit ${build.status})`);
}
const loadAtStart = Number(os.loadavg()[0]!.toFixed(2));
const tPrep = performance.now();
const homes = [await prepare(0), await prepare(COMPLETED)];
const prepareMs = Math.round(performance.now() - tPrep);
const bytes = (h: Home) => fs.statSync(path.join(h.dir, 'home', 'bridge.db')).size;
type Samples = {
  ready: number[];
  rss: number[];
  run: number[];
  approve: number[];
  warnings: string[];
};
const samples: Samples[] = homes.map(() => ({
  ready: [],
  rss: [],
  run: [],
  approve: [],
  warnings: [],
}));
try {
  for (let i = 0; i < RUNS; i++) {
    for (const [k, h] of homes.entries()) {
      const s = samples[k]!;
      const serve = await measureServe(h);
      s.ready.push(serve.readyMs);
      s.rss.push(serve.idleRssMb);
      s.warnings.push(...serve.warnings);
      s.run.push(
        timeCli(h, [
          'run',
          'hist',
          '--workspace',
          path.join(h.dir, 'ws0'),
          '--spec',
          `new ${i}`,
          '--detach',
        ]),
      );
      s.approve.push(timeCli(h, ['approve', h.awaiting[i]!, '--detach']));
    }
  }
  const figures = samples.map((s, k) => ({
    completed_runs: homes[k]!.completed - 1,
    bridge_db_bytes: bytes(homes[k]!),
    ready_ms: { median: median(s.ready), samples: s.ready },
    idle_rss_mb: { median: median(s.rss), samples: s.rss },
    run_detach_ms: { median: median(s.run), samples: s.run },
    approve_detach_ms: { median: median(s.approve), samples: s.approve },
    serve_warnings: s.warnings.slice(0, 5),
  }));
  const [empty, full] = figures as [(typeof figures)[0], (typeof figures)[0]];
  const ratio = (a: number, b: number) => Number((b / a).toFixed(2));
  const ratios = {
    ready_ms: ratio(empty.ready_ms.median, full.ready_ms.median),
    idle_rss_mb: ratio(empty.idle_rss_mb.median, full.idle_rss_mb.median),
    run_detach_ms: ratio(empty.run_detach_ms.median, full.run_detach_ms.median),
    approve_detach_ms: ratio(empty.approve_detach_ms.median, full.approve_detach_ms.median),
  };
  console.log(
    JSON.stringify(
      {
        bench: 'history',
        node: process.version,
        cpus: os.cpus().length,
        entry: ENTRY,
        load_avg_1m: { start: loadAtStart, end: Number(os.loadavg()[0]!.toFixed(2)) },
        runs: RUNS,
        prepare_ms: prepareMs,
        empty,
        with_history: full,
        ratios,
        goal: { max_ratio: GOAL_RATIO },
        goals_met: Object.values(ratios).every((r) => r <= GOAL_RATIO),
      },
      null,
      2,
    ),
  );
} finally {
  for (const h of homes) fs.rmSync(h.dir, { recursive: true, force: true });
}
