/**
 * Benchmark: how long the CLI takes to answer issue 30's hostile probes (goal: every one within
 * 1 s, with its refusal). Each probe runs the real `bin/phasebridge.js` (the bundle, built
 * first) `--rounds` times; prints one JSON object with each probe's median and max wall time,
 * its exit code and the first line it printed, and the slowest probe.
 *
 * Run: npx tsx bench/hostile-probes.ts [--rounds 3]
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const BIN = path.join(repo, 'bin', 'phasebridge.js');
const roundsArg = process.argv.indexOf('--rounds');
const ROUNDS = roundsArg > 0 ? Number(process.argv[roundsArg + 1]) : 3;

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-probes-'));
const home = path.join(root, 'home');

function cli(args: string[], env: Record<string, string> = {}) {
  const t = process.hrtime.bigint();
  const r = spawnSync(process.execPath, [BIN, ...args], {
    cwd: root,
    env: { ...process.env, PHASEBRIDGE_HOME: home, NO_COLOR: '1', ...env },
    encoding: 'utf8',
    timeout: 30_000,
  });
  const ms = Number(process.hrtime.bigint() - t) / 1e6;
  const line = `${r.stderr}${r.stdout}`
    .split('\n')
    .find((l) => l.trim() !== '' && !l.startsWith('phasebridge: build'));
  return { ms, code: r.status, line: line ?? '' };
}

function startRun(name: string): { runId: string; ledger: string } {
  const ws = path.join(root, name);
  const r = spawnSync(process.execPath, [BIN, 'run', 'demo', '--workspace', ws, '--spec', 'x'], {
    cwd: root,
    env: { ...process.env, PHASEBRIDGE_HOME: home },
    encoding: 'utf8',
  });
  const runId = /phasebridge approve (\S+)/.exec(r.stdout)?.[1];
  if (!runId) throw new Error(`no run started: ${r.stderr}`);
  return { runId, ledger: path.join(ws, '.phasebridge', 'runs', runId, 'ledger.jsonl') };
}

try {
  cli(['--help']); // builds dist/ once, outside the timings
  const fifoRun = startRun('ws-fifo');
  fs.rmSync(fifoRun.ledger);
  execFileSync('mkfifo', [fifoRun.ledger]);
  const sparseRun = startRun('ws-sparse');
  fs.rmSync(sparseRun.ledger);
  fs.writeFileSync(sparseRun.ledger, '');
  fs.truncateSync(sparseRun.ledger, 1024 ** 3);
  const fifoSpec = path.join(root, 'spec.fifo');
  execFileSync('mkfifo', [fifoSpec]);
  const bigSpec = path.join(root, 'big.spec');
  fs.writeFileSync(bigSpec, '');
  fs.truncateSync(bigSpec, 50 * 1024 * 1024);
  const deep = path.join(root, 'ws-deep', 'workflows');
  fs.mkdirSync(deep, { recursive: true });
  fs.writeFileSync(path.join(deep, 'deep.workflow.yaml'), `${'- '.repeat(5000)}x\n`);
  const ws = path.join(root, 'ws-spec');

  const probes: Record<string, () => ReturnType<typeof cli>> = {
    'status, FIFO ledger': () => cli(['status', fifoRun.runId]),
    'approve, FIFO ledger': () => cli(['approve', fifoRun.runId]),
    'status, 1 GB sparse ledger': () => cli(['status', sparseRun.runId]),
    'approve, 1 GB sparse ledger': () => cli(['approve', sparseRun.runId]),
    'run --spec-file /dev/zero': () =>
      cli(['run', 'demo', '--workspace', ws, '--spec-file', '/dev/zero']),
    'run --spec-file FIFO': () => cli(['run', 'demo', '--workspace', ws, '--spec-file', fifoSpec]),
    'run --spec-file 50 MB': () => cli(['run', 'demo', '--workspace', ws, '--spec-file', bigSpec]),
    'status, PHASEBRIDGE_CONFIG=/dev/zero': () =>
      cli(['status'], { PHASEBRIDGE_CONFIG: '/dev/zero' }),
    'run, deeply nested workflow': () =>
      cli(['run', 'deep', '--workspace', path.join(root, 'ws-deep'), '--spec', 'x']),
    'serve --concurrency 1e9': () => cli(['serve', '--concurrency', '1e9']),
    "run --workspace ''": () => cli(['run', 'demo', '--workspace', '', '--spec', 'x']),
  };
  const results: Record<
    string,
    { median_ms: number; max_ms: number; exit: number | null; line: string }
  > = {};
  for (const [name, probe] of Object.entries(probes)) {
    const runs = Array.from({ length: ROUNDS }, probe);
    const times = runs.map((r) => r.ms).sort((a, b) => a - b);
    results[name] = {
      median_ms: Math.round(times[Math.floor(times.length / 2)]!),
      max_ms: Math.round(times.at(-1)!),
      exit: runs[0]!.code,
      line: runs[0]!.line.slice(0, 160),
    };
  }
  const slowest = Object.entries(results).sort((a, b) => b[1].max_ms - a[1].max_ms)[0]!;
  const bare = Array.from({ length: ROUNDS }, () => {
    const t = process.hrtime.bigint();
    spawnSync(process.execPath, ['-e', '0']);
    return Number(process.hrtime.bigint() - t) / 1e6;
  }).sort((a, b) => a - b);
  console.log(
    JSON.stringify(
      {
        rounds: ROUNDS,
        bare_node_ms: Math.round(bare[Math.floor(bare.length / 2)]!),
        probes: results,
        slowest: { probe: slowest[0], max_ms: slowest[1].max_ms },
        all_within_1s: Object.values(results).every((r) => r.max_ms <= 1000),
      },
      null,
      2,
    ),
  );
} finally {
  fs.rmSync(root, { recursive: true, force: true });
}
