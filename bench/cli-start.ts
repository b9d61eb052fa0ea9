/**
 * Benchmark: how long the `phasebridge` command takes to start, against bare Node.
 *   node_bare: `node -e 0`, the floor every Node program pays.
 *   help:      `phasebridge --help`.
 *   status:    `phasebridge status` over a PHASEBRIDGE_HOME holding RUNS runs (the runs table).
 * Both CLI cases go through bin/phasebridge.js, i.e. its staleness check and the dist/ bundle
 * (built first here if stale, so no build is timed). The home is filled with the real CLI
 * (`run demo --detach`). The three cases are interleaved, round after round, so load changes hit
 * each alike; wall time of spawn to exit, and CPU time (user + system, all threads; from
 * /proc/self/stat's children ticks, so 10 ms steps: averaged), which other load disturbs less.
 * Also reported: the cost of the bin's staleness check, and the libraries `--help` and `status`
 * load before running (from dist/meta.json, and dist/fast-status.meta.json for `status`: the
 * bin answers a plain `status` from that bundle): a lazy import turned eager shows there.
 * The timed calls run with the V8 code cache dist/main.js keeps per command (the seeding and
 * warm-up calls write it, as any first call of a command does).
 * Goal: each CLI case's median ≤ 2× the bare-Node median (issue 31).
 *
 * Run: npx tsx bench/cli-start.ts [--rounds 15] [--runs 50]
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { isBuiltin } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const BIN = path.join(repo, 'bin', 'phasebridge.js');
const arg = (name: string): string | undefined => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const ROUNDS = Number(arg('rounds') ?? 15);
const RUNS = Number(arg('runs') ?? 50);
const GOAL_RATIO = 2;

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-bench-cli-'));
const env = {
  PATH: process.env.PATH,
  HOME: dir,
  PHASEBRIDGE_HOME: path.join(dir, 'home'),
  LOG_LEVEL: 'warn',
};

/** CPU time (ms) of this process's waited-for children: cutime + cstime of /proc/self/stat. */
function childrenCpuMs(): number {
  const stat = fs.readFileSync('/proc/self/stat', 'utf8');
  // The command name (field 2) may hold spaces: count fields after its closing parenthesis.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[13]) + Number(fields[14])) * 10; // USER_HZ is 100 on Linux
}

/** Runs `node ...args` in the bench folder; throws with its output unless it exits 0. */
function node(args: readonly string[]): { ms: number; cpuMs: number; out: string; err: string } {
  const cpuBefore = childrenCpuMs();
  const started = performance.now();
  const res = spawnSync(process.execPath, args, { cwd: dir, env, encoding: 'utf8' });
  const ms = performance.now() - started;
  if (res.status !== 0) {
    throw new Error(`node ${args.join(' ')} exited ${res.status}:\n${res.stdout}${res.stderr}`);
  }
  return { ms, cpuMs: childrenCpuMs() - cpuBefore, out: res.stdout, err: res.stderr };
}

/** Fills the home with RUNS detached demo runs, through the real CLI; returns its run count. */
function seedRuns(): number {
  const ws = path.join(dir, 'ws');
  for (let i = 0; i < RUNS; i++) {
    node([BIN, 'run', 'demo', '--workspace', ws, '--spec', `bench run ${i}`, '--detach']);
  }
  const listed = JSON.parse(node([BIN, 'status', '--json', '--limit', '100000']).out);
  return (listed as unknown[]).length;
}

function summary(values: number[]) {
  const s = [...values].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)]!;
  const mid = Math.floor(s.length / 2);
  const median = s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
  return { median_ms: Number(median.toFixed(1)), p90_ms: Number(at(0.9).toFixed(1)) };
}

/** Mean cost (ms) of the bin's staleness check on this checkout, measured in-process. */
async function staleCheckMs(): Promise<number> {
  const { staleReason } = await import(path.join(repo, 'scripts', 'bundle.mjs'));
  const n = 200;
  const started = performance.now();
  for (let i = 0; i < n; i++) staleReason(repo);
  return Number(((performance.now() - started) / n).toFixed(3));
}

/**
 * Libraries a command loads: the static import closure (dist/meta.json) of src/cli/main.ts and of
 * the command modules it imports for that command (src/cli/program.ts: all of them for `--help`).
 * A lazy `import()` is a lazy module init in the CommonJS bundle; a lazy import turned eager shows
 * here. `fast`: the closure of the fast bundle (dist/fast-status.meta.json), which answers a plain
 * `status` without the main bundle.
 */
function librariesLoaded(commandModules: 'all' | 'fast'): string[] {
  type Input = { imports: { path: string; kind: string; external?: boolean }[] };
  const metaFile = commandModules === 'fast' ? 'fast-status.meta.json' : 'meta.json';
  const meta = JSON.parse(fs.readFileSync(path.join(repo, 'dist', metaFile), 'utf8'));
  const inputs = meta.inputs as Record<string, Input>;
  const libs = new Set<string>();
  const seen = new Set<string>();
  const todo =
    commandModules === 'fast'
      ? ['src/cli/fast-status.ts']
      : [
          'src/cli/main.ts',
          ...Object.keys(inputs).filter((f) => f.startsWith('src/cli/commands/')),
        ];
  for (let file = todo.pop(); file !== undefined; file = todo.pop()) {
    if (seen.has(file) || inputs[file] === undefined) continue;
    seen.add(file);
    const lib = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(file)?.[1];
    if (lib) libs.add(lib);
    for (const i of inputs[file]!.imports) {
      if (i.kind !== 'import-statement' && i.kind !== 'require-call') continue;
      if (!i.external) todo.push(i.path);
      // Not libraries: Node's own modules (better-sqlite3 names them without `node:`) and the
      // `<define:…>` entries esbuild lists for a value defined at build time.
      else if (!isBuiltin(i.path) && !i.path.startsWith('<define:')) libs.add(i.path);
    }
  }
  return [...libs].sort();
}

try {
  // Builds dist/ when stale, so that no build lands in the timed rounds.
  const built = node([BIN, '--version']).err.includes('building dist/');
  const runsInHome = seedRuns();
  const cases = {
    node_bare: ['-e', '0'],
    help: [BIN, '--help'],
    status: [BIN, 'status'],
  } as const;
  type Case = keyof typeof cases;
  const samples: Record<Case, number[]> = { node_bare: [], help: [], status: [] };
  const cpu: Record<Case, number[]> = { node_bare: [], help: [], status: [] };
  for (const c of Object.keys(cases) as Case[]) node(cases[c]); // warm the page cache
  const loadAtStart = Number(os.loadavg()[0]!.toFixed(2));
  // A source saved meanwhile (other work in the checkout) makes a timed call rebuild: counted.
  let rebuilds = 0;
  for (let round = 0; round < ROUNDS; round++) {
    for (const c of Object.keys(cases) as Case[]) {
      const { ms, cpuMs, err } = node(cases[c]);
      samples[c].push(ms);
      cpu[c].push(cpuMs);
      if (err.includes('building dist/')) rebuilds++;
    }
  }
  const cpuMean = (c: Case) => cpu[c].reduce((a, b) => a + b, 0) / cpu[c].length;
  const bare = summary(samples.node_bare);
  const versus = (c: Case) => {
    const s = summary(samples[c]);
    const ratio = Number((s.median_ms / bare.median_ms).toFixed(2));
    return {
      ...s,
      ratio_to_bare: ratio,
      p90_ratio_to_bare: Number((s.p90_ms / bare.p90_ms).toFixed(2)),
      cpu_ms_mean: Number(cpuMean(c).toFixed(1)),
      cpu_ratio_to_bare: Number((cpuMean(c) / cpuMean('node_bare')).toFixed(2)),
      goal_met: ratio <= GOAL_RATIO,
      samples: samples[c].map((v) => Number(v.toFixed(1))),
    };
  };
  const help = versus('help');
  const status = versus('status');
  const result = {
    bench: 'cli-start',
    node: process.version,
    cpus: os.cpus().length,
    load_avg_1m: { start: loadAtStart, end: Number(os.loadavg()[0]!.toFixed(2)) },
    rounds: ROUNDS,
    runs_in_home: runsInHome,
    built_before_timing: built,
    rebuilt_while_timing: rebuilds,
    stale_check_ms: await staleCheckMs(),
    help_loads_libraries: librariesLoaded('all'),
    status_loads_libraries: librariesLoaded('fast'),
    node_bare: {
      ...bare,
      cpu_ms_mean: Number(cpuMean('node_bare').toFixed(1)),
      samples: samples.node_bare.map((v) => Number(v.toFixed(1))),
    },
    help,
    status,
    goal: { max_ratio_to_bare: GOAL_RATIO, met: help.goal_met && status.goal_met },
  };
  console.log(JSON.stringify(result, null, 2));
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}
