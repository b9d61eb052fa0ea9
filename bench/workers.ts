/**
 * Benchmark: scaling over remote workers. 16 runs of one 2 s agent step on 1, 2 and 4
 * `phasebridge worker` processes (concurrency 1 each), each with its own empty home and work
 * folder, in git workspace mode against a local bare repository (clone cache, checkout, commit,
 * push, bridge fetch: all of it is in the measured time). The bridge runs no jobs itself.
 *   wallMs:      first run started → last run completed (workers already up)
 *   idealMs:     16 × 2 s / workers
 *   efficiency:  idealMs / wallMs (goal ≥ 0.85 at 4 workers)
 *   vsOneWorker: (wallMs at 1 worker / workers) / wallMs, the scaling alone
 * Needs redis-server (or REDIS_URL). Prints one JSON object.
 *
 * `--timeline` adds each round's per-job timeline (bench/workers-timeline.ts): when each job was
 * enqueued, picked up, its workspace ready, its agent started and ended, committed, pushed, heard
 * and applied by the bridge, the mean of each phase and the workers' idle time between jobs.
 *
 * `--start sequential` (default) starts the runs one after another, `--start parallel` all at once.
 *
 * Run: npx tsx bench/workers.ts [--runs 16] [--step-ms 2000] [--workers 1,2,4] [--timeline]
 *      [--start sequential|parallel] [--agent sh|node]
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { migrateToLatest, openBridgeDb } from '../src/db/connection.ts';
import { createRepositories } from '../src/db/repositories/index.ts';
import { Orchestrator } from '../src/jobs/orchestrator/orchestrator.ts';
import { createLogger } from '../src/log.ts';
import {
  bridgeQueue,
  ensureBuilt,
  gitFixture,
  startWorker,
  type WorkerProcess,
} from '../test/jobs/workers/support.ts';
import { redisAvailable, startRedis } from '../test/support/redis.ts';
import { Timeline } from './workers-timeline.ts';

const arg = (name: string): string | undefined => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const RUNS = Number(arg('runs') ?? 16);
const STEP_MS = Number(arg('step-ms') ?? 2000);
const WORKERS = (arg('workers') ?? '1,2,4').split(',').map(Number);
const LEASE_MS = 60_000;
const TIMELINE = process.argv.includes('--timeline');
/**
 * How the runs are started: `sequential` (default) one after another, as requests arrive, so
 * workers start on the first while the bridge creates the rest; `parallel` all at once (then
 * every run's set-up interleaves and the first job is queued only when all are ready).
 */
const START = arg('start') ?? 'sequential';

/**
 * The task: writes a file named after its run (so every step commits something), then works
 * STEP_MS. `--agent sh` (default) is a shell and `sleep`, so a task takes STEP_MS; `--agent node`
 * is a Node script, whose own start-up (~50-150 ms, more on a loaded machine) adds to every task
 * and counts against the efficiency although it is the agent's, not phasebridge's.
 */
const AGENT = arg('agent') ?? 'sh';
const AGENT_JS = `require('fs').writeFileSync('out-' + process.env.PHASEBRIDGE_RUN_ID + '.txt', 'x\\n'); setTimeout(() => {}, ${STEP_MS});`;
const AGENT_SH = `echo x > "out-$PHASEBRIDGE_RUN_ID.txt"; exec sleep ${STEP_MS / 1000}`;
const AGENT_ARGV =
  AGENT === 'node' ? [process.execPath, '-e', AGENT_JS] : ['/bin/sh', '-c', AGENT_SH];

/** One round's figures. */
interface Round {
  workers: number;
  wallMs: number;
  efficiency: number;
  vsOneWorker?: number;
  [more: string]: unknown;
}

async function round(redisUrl: string, n: number): Promise<Round> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `pb-bench-workers-${n}-`));
  const home = path.join(dir, 'home');
  const workspace = path.join(dir, 'ws');
  gitFixture(dir, workspace);
  const db = openBridgeDb({ file: path.join(home, 'bridge.db') });
  await migrateToLatest(db);
  await createRepositories(db).agents.add({
    name: 'sleeper',
    engine: 'command',
    argv: AGENT_ARGV,
  });
  fs.mkdirSync(path.join(workspace, 'workflows'));
  fs.writeFileSync(
    path.join(workspace, 'workflows', 'task.workflow.yaml'),
    'id: task\nsteps:\n  - id: work\n    agent: sleeper\n    prompt: work\n',
  );
  // Production lease (60 s): a short one makes busy workers look stalled and costs retakes.
  const queue = await bridgeQueue(redisUrl, LEASE_MS);
  const log = createLogger({ level: 'silent' });
  // The timeline's clock starts with the round; re-based when the runs start (below).
  const timeline = new Timeline(Date.now());
  const o = await Orchestrator.create({
    db,
    queue: TIMELINE ? timeline.wrap(queue) : queue,
    log,
    home,
    worker: false,
    workspaceMode: 'git',
  });
  const workers: WorkerProcess[] = [];
  try {
    for (let i = 0; i < n; i++) {
      const env = { PHASEBRIDGE_JOB_LEASE_MS: String(LEASE_MS) };
      workers.push(await startWorker(redisUrl, path.join(dir, `w${i}`), [], env));
    }
    if (TIMELINE) timeline.follow(o);
    timeline.rebase(Date.now());
    const started = performance.now();
    const start = async (i: number) => {
      const at = timeline.startRun();
      const run = await o.startRun({
        workflow: 'task',
        workspace,
        spec: `task ${i}`,
        actor: { id: 'cli:bench' },
      });
      timeline.named(run.id, at);
      return run;
    };
    const runs: Awaited<ReturnType<typeof start>>[] = [];
    if (START === 'parallel') {
      runs.push(...(await Promise.all(Array.from({ length: RUNS }, (_, i) => start(i)))));
    } else {
      for (let i = 0; i < RUNS; i++) runs.push(await start(i));
    }
    const states = await Promise.all(runs.map((r) => o.waitUntilIdle(r.id)));
    const wallMs = performance.now() - started;
    const failed = states.filter((s) => s.status !== 'completed').length;
    const commits = states.filter((s) => {
      const out = execFileSync('git', ['ls-tree', '--name-only', `phasebridge/${s.id}`], {
        cwd: workspace,
        encoding: 'utf8',
      });
      return out.includes(`out-${s.id}.txt`);
    }).length;
    const idealMs = (RUNS * STEP_MS) / n;
    return {
      workers: n,
      runs: RUNS,
      failed,
      commitsLanded: commits,
      wallMs: Math.round(wallMs),
      idealMs,
      efficiency: Number((idealMs / wallMs).toFixed(3)),
      ...(TIMELINE ? { timeline: timeline.report() } : {}),
    };
  } finally {
    for (const w of workers) await w.stop();
    await o.close();
    await queue.close();
    await db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  if (!redisAvailable().ok) {
    console.log(JSON.stringify({ skipped: 'no redis-server and no REDIS_URL' }));
    return;
  }
  ensureBuilt();
  const redis = await startRedis();
  try {
    const rounds: Round[] = [];
    for (const n of WORKERS) {
      await redis.restart?.(); // an empty Redis per round: no workers or jobs of the last one
      rounds.push(await round(redis.url, n));
      const { timeline: _, ...figures } = rounds.at(-1)!;
      process.stderr.write(`bench workers: ${JSON.stringify(figures)}\n`);
    }
    const one = rounds.find((r) => r.workers === 1);
    for (const r of rounds) {
      if (one) r.vsOneWorker = Number((one.wallMs / r.workers / r.wallMs).toFixed(3));
    }
    const at4 = rounds.find((r) => r.workers === 4);
    console.log(
      JSON.stringify(
        {
          stepMs: STEP_MS,
          start: START,
          agent: AGENT,
          cpus: os.cpus().length,
          rounds,
          goal: { efficiencyAt4: 0.85, met: at4 ? at4.efficiency >= 0.85 : null },
        },
        null,
        2,
      ),
    );
  } finally {
    await redis.stop();
  }
}

await main();
