/**
 * Benchmark: `phasebridge serve` start-up, with every chat adapter configured.
 *   ready_ms: spawn of `node <entry> serve` → the first `/readyz` answering 200
 *             (polled every few ms from the moment of spawn; every probe, each adapter's
 *             included, must pass).
 *   ready_cpu_ms: CPU time (user + system, all threads; /proc/<pid>/stat) the serve process
 *             had used when it was ready: less sensitive than ready_ms to other load.
 *   idle_rss_mb: the serve process's VmRSS (/proc/<pid>/status), 2 s after it was ready.
 * Telegram, Slack (HTTP mode) and Discord point at the fakes of test/fakes/, started here, so
 * the figures include connecting to each platform. The same is measured with no platform
 * configured (console only), which shows what loading the adapters' SDKs costs.
 * Two entries are timed: `dist` (dist/main.js, what `npm start` runs; built once here first)
 * and `tsx` (bin/phasebridge.js, the sources compiled at run time), for comparison. Each
 * scenario runs 5 times per entry (fresh home each time; all interleaved so load changes hit
 * every one alike); prints one JSON object with every sample, median and max, and whether the
 * goals are met (they apply to `dist`).
 *
 * Run: npx tsx bench/startup.ts [--runs 5] [--entries dist,tsx]
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { FakeDiscord } from '../test/fakes/discord.ts';
import { FakeSlack } from '../test/fakes/slack.ts';
import { FakeTelegram } from '../test/fakes/telegram.ts';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const arg = (name: string): string | undefined => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const RUNS = Number(arg('runs') ?? 5);
/** The CLI builds timed: the bundle `npm start` runs, and the tsx entry of bin/. */
const ENTRIES = { dist: 'dist/main.js', tsx: 'bin/phasebridge.js' } as const;
type EntryName = keyof typeof ENTRIES;
const chosen = (arg('entries') ?? 'dist,tsx').split(',') as EntryName[];
for (const name of chosen) {
  if (!(name in ENTRIES)) throw new Error(`--entries: unknown "${name}" (dist, tsx)`);
}
const IDLE_MS = 2000;
const GIVE_UP_MS = 30_000;
const GOALS = { readyMs: 1500, idleRssMb: 150 };

/** The platform fakes every run's bridge talks to. */
interface Fakes {
  telegram: FakeTelegram;
  slack: FakeSlack;
  discord: FakeDiscord;
}

/** One measured start-up. */
interface Sample {
  readyMs: number;
  readyCpuMs: number;
  idleRssMb: number;
}

/** A port that was free a moment ago (serve needs a fixed one so it can be polled from spawn). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Which adapters a measured bridge runs. */
type Scenario = 'all_adapters' | 'console_only';

function bridgeEnv(fakes: Fakes | undefined, home: string, port: number): NodeJS.ProcessEnv {
  const base = {
    PATH: process.env.PATH,
    HOME: home,
    PHASEBRIDGE_HOME: path.join(home, 'home'),
    PHASEBRIDGE_WORKSPACE: path.join(home, 'ws'),
    PHASEBRIDGE_PORT: String(port),
    LOG_LEVEL: 'warn',
  };
  if (!fakes) return base;
  return {
    ...base,
    TELEGRAM_BOT_TOKEN: fakes.telegram.token,
    TELEGRAM_API_ROOT: fakes.telegram.apiRoot,
    SLACK_BOT_TOKEN: fakes.slack.botToken,
    SLACK_SIGNING_SECRET: fakes.slack.signingSecret,
    SLACK_API_URL: fakes.slack.apiUrl,
    DISCORD_BOT_TOKEN: fakes.discord.token,
    DISCORD_APPLICATION_ID: fakes.discord.state.applicationId,
    DISCORD_API_URL: fakes.discord.apiUrl,
  };
}

/** Resolves on the first 200 of /readyz; rejects when the child exits first or time runs out. */
async function waitReady(child: ChildProcess, port: number, output: () => string): Promise<void> {
  const deadline = Date.now() + GIVE_UP_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) {
      throw new Error(`serve exited with ${child.exitCode} before ready:\n${output()}`);
    }
    const status = await fetch(`http://127.0.0.1:${port}/readyz`).then(
      (r) => r.status,
      () => 0,
    );
    if (status === 200) return;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`/readyz not 200 within ${GIVE_UP_MS} ms:\n${output()}`);
}

/** utime + stime of a process in ms (fields 14 and 15 of /proc/<pid>/stat, in clock ticks). */
function cpuMs(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) may hold spaces: count fields after its closing parenthesis.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]);
  return ticks * 10; // USER_HZ is 100 on Linux
}

function rssMb(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/^VmRSS:\s+(\d+)\s+kB$/m.exec(status)?.[1]);
  if (!Number.isFinite(kb)) throw new Error(`no VmRSS in /proc/${pid}/status`);
  return Number((kb / 1024).toFixed(1));
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

async function measureOnce(entry: EntryName, fakes: Fakes | undefined): Promise<Sample> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-bench-startup-'));
  const port = await freePort();
  let output = '';
  const started = performance.now();
  const child = spawn(process.execPath, [path.join(repo, ENTRIES[entry]), 'serve'], {
    cwd: dir,
    // The bin runs the bundle unless told to compile the sources: the tsx entry is that path.
    env: {
      ...bridgeEnv(fakes, dir, port),
      ...(entry === 'tsx' ? { PHASEBRIDGE_FROM_SOURCE: '1' } : {}),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.on('data', (d: Buffer) => {
    output += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    output += d.toString();
  });
  try {
    await waitReady(child, port, () => output);
    const readyMs = performance.now() - started;
    const readyCpuMs = cpuMs(child.pid!);
    await new Promise((r) => setTimeout(r, IDLE_MS));
    return { readyMs: Number(readyMs.toFixed(1)), readyCpuMs, idleRssMb: rssMb(child.pid!) };
  } finally {
    await stop(child);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function summary(values: number[]) {
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  const median = s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
  return { median: Number(median.toFixed(1)), max: s.at(-1)! };
}

if (chosen.includes('dist')) {
  const build = spawnSync(process.execPath, [path.join(repo, 'scripts', 'build.mjs')], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  if (build.status !== 0) throw new Error(`scripts/build.mjs failed (exit ${build.status})`);
}
const fakes: Fakes = {
  telegram: await FakeTelegram.start(),
  slack: await FakeSlack.start(),
  discord: await FakeDiscord.start(),
};
// Other work on the machine inflates every figure: the load averages are reported with them.
const loadAtStart = Number(os.loadavg()[0]!.toFixed(2));
try {
  const samples = new Map(
    chosen.map((name): [EntryName, Record<Scenario, Sample[]>] => [
      name,
      { all_adapters: [], console_only: [] },
    ]),
  );
  for (let i = 0; i < RUNS; i++) {
    for (const [name, scenarios] of samples) {
      scenarios.all_adapters.push(await measureOnce(name, fakes));
      scenarios.console_only.push(await measureOnce(name, undefined));
    }
  }
  const report = (list: Sample[]) => {
    const ready = summary(list.map((s) => s.readyMs));
    const rss = summary(list.map((s) => s.idleRssMb));
    return {
      ready_ms: { ...ready, samples: list.map((s) => s.readyMs) },
      ready_cpu_ms: summary(list.map((s) => s.readyCpuMs)),
      idle_rss_mb: { ...rss, samples: list.map((s) => s.idleRssMb) },
      goals_met: ready.max <= GOALS.readyMs && rss.max <= GOALS.idleRssMb,
    };
  };
  const entries = Object.fromEntries(
    [...samples].map(([name, scenarios]) => [
      name,
      {
        entry: ENTRIES[name],
        all_adapters: {
          adapters: ['web', 'telegram', 'slack', 'discord'],
          ...report(scenarios.all_adapters),
        },
        console_only: { adapters: ['web'], ...report(scenarios.console_only) },
      },
    ]),
  );
  const result = {
    bench: 'startup',
    node: process.version,
    cpus: os.cpus().length,
    load_avg_1m: { start: loadAtStart, end: Number(os.loadavg()[0]!.toFixed(2)) },
    runs: RUNS,
    goals: { ready_ms: GOALS.readyMs, idle_rss_mb: GOALS.idleRssMb, apply_to: 'dist' },
    entries,
  };
  console.log(JSON.stringify(result, null, 2));
} finally {
  await fakes.telegram.close();
  await fakes.slack.close();
  await fakes.discord.close();
}
