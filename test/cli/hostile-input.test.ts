/**
 * Hostile files and input through the real CLI (issue 30's probes): each answers with one clear
 * line, refuses what it cannot use, and changes nothing outside the workspace.
 */
import { execFileSync } from 'node:child_process';
import {
  linkSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { MANY_STEPS_TIMEOUT_MS, runCli, runCliAsync } from './support.ts';

const root = mkdtempSync(join(tmpdir(), 'pb-cli-hostile-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const home = join(root, 'home');
const clean = (s: string) => s.replace(/^phasebridge: building dist\/.*\n/gm, '');
const cli = (args: string[], env: Record<string, string> = {}) =>
  runCliAsync(args, home, root, env).then((r) => ({ ...r, err: clean(r.err) }));
const mkfifo = (p: string) => execFileSync('mkfifo', [p]);

/** Starts a demo run in a fresh workspace; returns its id and ledger path. */
function startRun(name: string): { ws: string; runId: string; ledger: string } {
  const ws = join(root, name);
  const res = runCli(['run', 'demo', '--workspace', ws, '--spec', 'x'], home, root);
  expect(res.code).toBe(0);
  const runId = /phasebridge approve (\S+)/.exec(res.out)![1]!;
  return { ws, runId, ledger: join(ws, '.phasebridge', 'runs', runId, 'ledger.jsonl') };
}

describe('hostile state files', () => {
  it('a FIFO or a 1 GB sparse ledger is refused at once, naming the run', {
    timeout: MANY_STEPS_TIMEOUT_MS,
  }, async () => {
    const run = startRun('ws-fifo');
    rmSync(run.ledger);
    mkfifo(run.ledger);
    for (const verb of ['status', 'approve']) {
      const res = await cli([verb, run.runId]);
      expect(res.code).not.toBe(0);
      expect(res.err).toContain('the ledger is refused');
      expect(res.err).toContain('is not a regular file');
    }
    rmSync(run.ledger);
    writeFileSync(run.ledger, '');
    truncateSync(run.ledger, 1024 ** 3);
    const big = await cli(['status', run.runId]);
    expect(big.err).toContain('over the 1 MB limit for a ledger line');
    expect(big.err).not.toContain('internal error');
  });

  it('a hard-linked ledger is never written through; repair gives it a file of its own', {
    timeout: MANY_STEPS_TIMEOUT_MS,
  }, async () => {
    const run = startRun('ws-link');
    const outside = join(root, 'outside.jsonl');
    writeFileSync(outside, readFileSync(run.ledger));
    rmSync(run.ledger);
    linkSync(outside, run.ledger);
    const before = readFileSync(outside, 'utf8');
    const approve = await cli(['approve', run.runId, '--detach']);
    expect(approve.code).not.toBe(0);
    expect(approve.err).toMatch(/has 2 hard links .*: it is never written through/);
    const repair = await cli(['repair', run.runId]);
    expect(repair.code).toBe(0);
    const again = await cli(['approve', run.runId, '--detach']);
    expect(again.code).toBe(0);
    expect(again.out).toContain(`run ${run.runId} is running step build`);
    expect(readFileSync(outside, 'utf8')).toBe(before);
  });
});

describe('repair of damaged projections', () => {
  it('a symlinked or FIFO run.json is moved aside and rebuilt; approve works at once', {
    timeout: MANY_STEPS_TIMEOUT_MS,
  }, async () => {
    const run = startRun('ws-runjson');
    const runJson = join(run.ledger, '..', 'run.json');
    const outside = join(root, 'outside-run.json');
    writeFileSync(outside, '{}\n');
    rmSync(runJson);
    symlinkSync(outside, runJson);
    const repair = await cli(['repair', run.runId]);
    expect(repair.code).toBe(0);
    expect(repair.out).toContain('run.json is a symlink; rebuilt from the ledger');
    expect(lstatSync(runJson).isFile()).toBe(true);
    rmSync(runJson);
    mkfifo(runJson);
    const again = await cli(['repair', run.runId]);
    expect(again.out).toContain('run.json is not a regular file; rebuilt from the ledger');
    const approve = await cli(['approve', run.runId, '--detach']);
    expect(approve.code).toBe(0);
    expect(approve.err).toBe('');
    expect(JSON.parse(readFileSync(runJson, 'utf8')).status).toBe('active');
    expect(readFileSync(outside, 'utf8')).toBe('{}\n');
  });
});

describe('hostile input files', () => {
  it('a device, a FIFO or a 50 MB spec file is refused with the reason', async () => {
    const fifo = join(root, 'spec.fifo');
    mkfifo(fifo);
    const big = join(root, 'big.spec');
    writeFileSync(big, '');
    truncateSync(big, 50 * 1024 * 1024);
    const ws = join(root, 'ws-spec');
    const cases: [string, RegExp][] = [
      ['/dev/zero', /refusing \/dev\/zero: it is not a regular file/],
      [fifo, /it is not a regular file/],
      [big, /it is 50 MB, over the 1 MB limit/],
    ];
    for (const [file, message] of cases) {
      const res = await cli(['run', 'demo', '--workspace', ws, '--spec-file', file]);
      expect(res.code).toBe(2);
      expect(res.err).toMatch(message);
    }
  });

  it('PHASEBRIDGE_CONFIG=/dev/zero is refused, not read forever', async () => {
    const res = await cli(['status'], { PHASEBRIDGE_CONFIG: '/dev/zero' });
    expect(res.code).not.toBe(0);
    expect(res.err).toContain('/dev/zero: cannot be read (it is not a regular file)');
  });

  it('a deeply nested workflow gets one line naming the limit', async () => {
    const file = join(root, 'deep.workflow.yaml');
    const deep = `${'['.repeat(5000)}${']'.repeat(5000)}`;
    writeFileSync(file, `id: deep\nsteps:\n  - id: a\n    prompt: ${deep}\n`);
    const res = await cli(['run', file, '--workspace', join(root, 'ws-deep'), '--spec', 'x']);
    expect(res.code).toBe(2);
    expect(res.err.trim().split('\n')).toHaveLength(1);
    expect(res.err).toContain('it nests more than 64 levels deep');
    expect(res.err).not.toContain('call stack');
  });
});

describe('input bounds', () => {
  it('serve --concurrency outside 0..64 is refused with the range', async () => {
    for (const value of ['-1', 'abc', '1e9']) {
      const res = await cli(['serve', '--concurrency', value]);
      expect(res.code).toBe(2);
      expect(res.err).toContain(
        `--concurrency must be a whole number from 0 to 64 (got '${value}')`,
      );
    }
  });

  it('an empty --workspace is refused and nothing is written in the current folder', async () => {
    const cwd = join(root, 'cwd');
    mkdirSync(cwd);
    const res = await runCliAsync(['run', 'demo', '--workspace', '', '--spec', 'x'], home, cwd);
    expect(res.code).toBe(2);
    expect(clean(res.err)).toContain('--workspace needs a folder');
    expect(readdirSync(cwd)).toEqual([]);
  });

  it('an unknown flag is named exactly', async () => {
    const res = await cli(['run', 'demo', '--workspace', join(root, 'ws-b'), '--bogus']);
    expect(res.code).toBe(2);
    expect(res.err).toContain("unknown option '--bogus'");
  });

  it('a bridge.db from a newer phasebridge is refused with the upgrade line', async () => {
    const newer = join(root, 'home-newer');
    mkdirSync(newer);
    const db = new Database(join(newer, 'bridge.db'));
    db.pragma('user_version = 999');
    db.close();
    const res = await runCliAsync(['status'], newer, root);
    expect(res.code).not.toBe(0);
    expect(clean(res.err)).toMatch(
      /written by a newer phasebridge \(schema 999, this one knows \d+\): upgrade, or start from a backup/,
    );
  });
});
