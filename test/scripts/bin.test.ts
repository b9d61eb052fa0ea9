/**
 * The `phasebridge` command (bin/phasebridge.js) runs the esbuild bundle in dist/, building it on
 * first use and again when a source changes. Run on a copy of the checkout (node_modules linked),
 * so the real dist/ and the real sources' times are never touched.
 */
import { type SpawnSyncReturns, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { slow } from '../support/slowdown.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const copy = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-bin-'));
afterAll(() => fs.rmSync(copy, { recursive: true, force: true }));
for (const entry of ['bin', 'scripts', 'src', 'migrations', 'package.json', 'package-lock.json']) {
  fs.cpSync(path.join(ROOT, entry), path.join(copy, entry), { recursive: true });
}
fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(copy, 'node_modules'), 'dir');

const BIN = path.join(copy, 'bin', 'phasebridge.js');
const env = (extra: Record<string, string> = {}) => ({
  PATH: process.env.PATH,
  PHASEBRIDGE_HOME: path.join(copy, 'home'),
  LOG_LEVEL: 'silent',
  ...extra,
});

function cli(args: string[], extra?: Record<string, string>): SpawnSyncReturns<string> {
  return spawnSync(process.execPath, [BIN, ...args], {
    cwd: copy,
    env: env(extra),
    encoding: 'utf8',
  });
}

/** Runs the bin without waiting, so several can start at once. */
function cliAsync(args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  const child = spawn(process.execPath, [BIN, ...args], { cwd: copy, env: env() });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => {
    out += String(d);
  });
  child.stderr.on('data', (d) => {
    err += String(d);
  });
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, out, err })));
}

const BUILDING = /^phasebridge: building dist\/ \((.+)\)$/m;

/** The CommonJS bundle dist/main.js runs (it names it), and the code cache file of `command`. */
function bundleAndCache(command: string): { bundle: string; cache: string } {
  const launcher = fs.readFileSync(path.join(copy, 'dist', 'main.js'), 'utf8');
  const bundle = /^const BUNDLE = "(main-[^"]+\.cjs)";$/m.exec(launcher)?.[1];
  expect(bundle, 'dist/main.js names its bundle').toBeDefined();
  const cache = path.join(copy, 'dist', 'cache', `${bundle}.${command}.${process.versions.v8}.v8`);
  return { bundle: bundle!, cache };
}

describe('bin/phasebridge.js', () => {
  it('runs the sources through tsx with PHASEBRIDGE_FROM_SOURCE=1, building nothing', () => {
    const res = cli(['--version'], { PHASEBRIDGE_FROM_SOURCE: '1' });
    expect(res.status, res.stderr).toBe(0);
    expect(res.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
    expect(fs.existsSync(path.join(copy, 'dist'))).toBe(false);
  });

  it('builds dist/ on first use, then runs the bundle without rebuilding', {
    timeout: slow(120_000),
  }, () => {
    const first = cli(['--help']);
    expect(first.status, first.stderr).toBe(0);
    expect(BUILDING.exec(first.stderr)?.[1]).toBe('dist/main.js missing');
    for (const command of ['run', 'status', 'approve', 'logs', 'serve', 'worker', 'doctor']) {
      expect(first.stdout).toMatch(new RegExp(`^  ${command}\\b`, 'm'));
    }
    expect(fs.existsSync(path.join(copy, 'dist', 'main.js'))).toBe(true);
    expect(fs.existsSync(path.join(copy, 'dist', 'fast-status.cjs'))).toBe(true);

    const second = cli(['status']);
    expect(second.status, second.stderr).toBe(0);
    expect(second.stderr).not.toMatch(BUILDING);
    expect(second.stdout).toMatch(/^no runs yet/);
  });

  it('runs the bundle with a V8 code cache per command, rewritten when unusable', {
    timeout: slow(120_000),
  }, () => {
    if (!fs.existsSync(path.join(copy, 'dist', 'main.js'))) cli(['--version']);
    const { cache } = bundleAndCache('status');
    fs.rmSync(cache, { force: true });
    // With an option: a plain `status` may be answered by dist/fast-status.cjs instead.
    const status = ['status', '--limit', '20'];
    const first = cli(status);
    expect(first.status, first.stderr).toBe(0);
    expect(fs.existsSync(cache)).toBe(true);
    const cached = cli(status);
    expect(cached.status, cached.stderr).toBe(0);
    expect(cached.stdout).toBe(first.stdout);
    expect(cached.stderr).toBe(first.stderr);

    // A damaged cache is rejected by V8: the command runs from source, then writes a good one.
    fs.writeFileSync(cache, 'not a code cache');
    const damaged = cli(status);
    expect(damaged.status, damaged.stderr).toBe(0);
    expect(damaged.stdout).toBe(first.stdout);
    expect(fs.readFileSync(cache, 'utf8')).not.toBe('not a code cache');

    const help = cli(['--help']);
    expect(help.status, help.stderr).toBe(0);
    expect(help.stdout).toMatch(/^ {2}status\b/m);
    expect(fs.existsSync(bundleAndCache('help').cache)).toBe(true);
    // Libraries bundled apart (dist/vendor/: classic zod, yaml for the engine) are cached too.
    const run = cli([
      'run',
      'demo',
      '--workspace',
      path.join(copy, 'ws'),
      '--spec',
      'x',
      '--detach',
    ]);
    expect(run.status, run.stderr).toBe(0);
    const caches = fs.readdirSync(path.join(copy, 'dist', 'cache'));
    for (const lib of ['zod', 'yaml']) {
      expect(caches).toContainEqual(
        expect.stringMatching(new RegExp(`^vendor_${lib}-\\w+\\.cjs\\.run\\.`)),
      );
    }
    // `import()` of an external library (ioredis) works inside the bundle: Redis is unreachable.
    const doctor = cli(['doctor'], { REDIS_URL: 'redis://127.0.0.1:1' });
    expect(doctor.stdout).toMatch(/^failed {2}redis: /m);
    expect(doctor.stderr).toBe('');
  });

  it('answers a plain `status` or `runs` from dist/fast-status.cjs, without the main bundle', {
    timeout: slow(120_000),
  }, () => {
    if (!fs.existsSync(path.join(copy, 'dist', 'main.js'))) cli(['--version']);
    // A home of its own: another test's detached run would change the table meanwhile.
    const home = { PHASEBRIDGE_HOME: path.join(copy, 'fast-home') };
    // The first call makes the home and bridge.db: only the main bundle does that.
    expect(cli(['status', '--limit', '20'], home).status).toBe(0);
    const { cache } = bundleAndCache('status');
    fs.rmSync(cache, { force: true });
    const full = spawnSync(process.execPath, [path.join(copy, 'dist', 'main.js'), 'status'], {
      cwd: copy,
      env: env(home),
      encoding: 'utf8',
    });
    fs.rmSync(cache, { force: true });
    for (const command of ['status', 'runs']) {
      const res = cli([command], home);
      expect(res.status, res.stderr).toBe(0);
      expect(res.stdout).toBe(full.stdout);
      expect(res.stdout).toMatch(/^no runs yet/);
    }
    // The main bundle never ran: it would have written its code cache at exit.
    expect(fs.existsSync(cache)).toBe(false);

    // A dist/ without the fast bundle is stale: rebuilt by the next call, whatever it is.
    fs.rmSync(path.join(copy, 'dist', 'fast-status.cjs'));
    const next = cli(['status'], home);
    expect(next.status, next.stderr).toBe(0);
    expect(BUILDING.exec(next.stderr)?.[1]).toBe('dist/fast-status.cjs missing');
    expect(next.stdout).toBe(full.stdout);
    expect(fs.existsSync(path.join(copy, 'dist', 'fast-status.cjs'))).toBe(true);
  });

  it('prints `--help` to a pipe from dist/help.txt, as the main bundle does', {
    timeout: slow(120_000),
  }, () => {
    if (!fs.existsSync(path.join(copy, 'dist', 'main.js'))) cli(['--version']);
    const main = (args: string[]) =>
      spawnSync(process.execPath, [path.join(copy, 'dist', 'main.js'), ...args], {
        cwd: copy,
        env: env(),
        encoding: 'utf8',
      });
    const full = main(['--help']);
    expect(full.status).toBe(0);
    const { cache } = bundleAndCache('help');
    fs.rmSync(cache, { force: true });
    for (const flag of ['--help', '-h']) {
      const res = cli([flag]);
      expect(res.status, res.stderr).toBe(0);
      expect(res.stdout).toBe(full.stdout);
      expect(res.stderr).toBe('');
    }
    // The main bundle never ran (it would have written its code cache at exit)…
    expect(fs.existsSync(cache)).toBe(false);
    // …and a command's own help is still the main bundle's.
    const sub = cli(['status', '--help']);
    expect(sub.stdout).toBe(main(['status', '--help']).stdout);
    expect(sub.stdout).toMatch(/^Usage: phasebridge status \[options\] \[run\]/);
    // Without the text (a build that could not write it), the main bundle answers, unchanged.
    fs.rmSync(path.join(copy, 'dist', 'help.txt'));
    const fallback = cli(['--help']);
    expect(fallback.stdout).toBe(full.stdout);
    expect(fallback.stderr).not.toMatch(BUILDING);
  });

  it('rebuilds once when a source changes, however many calls start at once', {
    timeout: slow(120_000),
  }, async () => {
    if (!fs.existsSync(path.join(copy, 'dist', 'main.js'))) cli(['--version']);
    const before = bundleAndCache('help');
    const program = path.join(copy, 'src', 'cli', 'program.ts');
    const source = fs.readFileSync(program, 'utf8');
    expect(source).toMatch(/\.version\('[^']+'\)/);
    fs.writeFileSync(program, source.replace(/\.version\('[^']+'\)/, ".version('9.9.9-rebuilt')"));

    const calls = await Promise.all([1, 2, 3].map(() => cliAsync(['--version'])));
    for (const call of calls) {
      expect(call.code, call.err).toBe(0);
      expect(call.out.trim()).toBe('9.9.9-rebuilt');
    }
    const builds = calls.filter((c) => BUILDING.test(c.err));
    expect(builds).toHaveLength(1);
    expect(BUILDING.exec(builds[0]!.err)?.[1]).toBe('sources changed');
    // The new bundle has a name (and so a code cache) of its own: no cache of the old one is used.
    const { bundle, cache } = bundleAndCache('help');
    expect(bundle).not.toBe(before.bundle);
    expect(fs.existsSync(cache)).toBe(true);
  });

  // The test's timeout (60 s) is below the age (120 s) at which any lock would be taken over.
  it('is not held up by a build stopped with Ctrl-C', { timeout: slow(60_000) }, async () => {
    const migrations = path.join(copy, 'migrations');
    fs.utimesSync(migrations, new Date(), new Date());
    const child = spawn(process.execPath, [BIN, '--version'], { cwd: copy, env: env() });
    let err = '';
    await new Promise<void>((resolve) => {
      child.stderr.on('data', (d) => {
        err += String(d);
        if (BUILDING.test(err)) resolve();
      });
    });
    const exited = new Promise((resolve) => child.on('exit', resolve));
    child.kill('SIGINT');
    await exited;
    expect(fs.existsSync(path.join(copy, 'dist', '.build-lock'))).toBe(true);

    const next = cli(['--version']);
    expect(next.status, next.stderr).toBe(0);
    expect(BUILDING.exec(next.stderr)?.[1]).toBe('sources changed');
    expect(next.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
    expect(fs.existsSync(path.join(copy, 'dist', '.build-lock'))).toBe(false);
  });
});
