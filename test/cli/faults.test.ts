/**
 * What the CLI says when the machine refuses something: one line naming the path (or port) and
 * the fix, exit 1 (bad usage stays exit 2), never a stack trace, never a hang. Each case spawns
 * the real CLI against a real file system.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createServer, type Server } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it, onTestFinished } from 'vitest';
import { slow } from '../support/slowdown.ts';

const BIN = path.resolve(import.meta.dirname, '../../bin/phasebridge.js');
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-faults-'));
afterAll(() => {
  fs.rmSync(root, { recursive: true, force: true });
});

const isRoot = process.getuid?.() === 0;
const linux = process.platform === 'linux';

interface Result {
  code: number | null;
  out: string;
  err: string;
  /** stderr without the launcher's "building dist/" notice. */
  lines: string[];
}

/** Runs the CLI with `env` on top of a quiet base; a hang shows up as code null after 30 s. */
function cli(
  args: string[],
  env: Record<string, string>,
  opts: { uid?: number; cwd?: string } = {},
): Result {
  const res = spawnSync(process.execPath, [BIN, ...args], {
    cwd: opts.cwd ?? root,
    env: { PATH: process.env.PATH, LOG_LEVEL: 'silent', DEMO_AGENT_BEHAVIOUR: 'sleep=20', ...env },
    encoding: 'utf8',
    timeout: slow(30_000),
    ...(opts.uid !== undefined ? { uid: opts.uid, gid: opts.uid } : {}),
  });
  const lines = res.stderr
    .split('\n')
    .filter((l) => l !== '' && !l.startsWith('phasebridge: building dist/'));
  return { code: res.status, out: res.stdout, err: res.stderr, lines };
}

function dir(name: string): string {
  const d = path.join(root, name);
  fs.mkdirSync(d, { recursive: true });
  return d;
}

/** Expects exactly one line on stderr, no stack trace, and the exit code. */
function expectOneLine(r: Result, code: number, line: string | RegExp): void {
  expect(r.err).not.toMatch(/^\s+at /m);
  expect(r.lines).toHaveLength(1);
  if (typeof line === 'string') expect(r.lines[0]).toBe(line);
  else expect(r.lines[0]).toMatch(line);
  expect(r.code).toBe(code);
}

describe('PHASEBRIDGE_HOME and bridge.db', () => {
  it('a home that is a file', () => {
    const home = path.join(root, 'home-file');
    fs.writeFileSync(home, 'not a folder\n');
    expectOneLine(
      cli(['status'], { PHASEBRIDGE_HOME: home }),
      1,
      `phasebridge: PHASEBRIDGE_HOME ${home} is a file, not a folder: set PHASEBRIDGE_HOME to a folder (default ./.phasebridge) or move the file aside`,
    );
  });

  it('a home this user cannot enter', () => {
    // root enters everything: run the CLI as nobody then, from source (it may not build dist/),
    // in folders nobody may pass through.
    const open = dir('open');
    fs.chmodSync(root, 0o711);
    fs.chmodSync(open, 0o711);
    const locked = path.join(open, 'locked');
    fs.mkdirSync(locked, { mode: 0o000 });
    fs.chmodSync(locked, 0o000);
    const home = path.join(locked, 'home');
    const r = cli(
      ['status'],
      { PHASEBRIDGE_HOME: home, ...(isRoot ? { PHASEBRIDGE_FROM_SOURCE: '1' } : {}) },
      isRoot ? { uid: 65534, cwd: os.tmpdir() } : {},
    );
    fs.chmodSync(root, 0o700);
    fs.chmodSync(locked, 0o700);
    expectOneLine(
      r,
      1,
      `phasebridge: PHASEBRIDGE_HOME ${home} is not accessible (EACCES): let the user running phasebridge read and write it (chown/chmod), or set PHASEBRIDGE_HOME to another folder`,
    );
  });

  it('a home open to other users is tightened to 0700, with a warning', () => {
    const home = dir('loose-home');
    fs.chmodSync(home, 0o755);
    const r = cli(['status'], { PHASEBRIDGE_HOME: home, LOG_LEVEL: 'warn' });
    expect(r.code).toBe(0);
    expect(fs.statSync(home).mode & 0o777).toBe(0o700);
    expect(r.err).toContain('PHASEBRIDGE_HOME was 0755 (open to other users): tightened to 0700');
    expect(fs.statSync(path.join(home, 'bridge.db')).mode & 0o777).toBe(0o600);
    // Once tight, nothing more is said.
    expect(cli(['status'], { PHASEBRIDGE_HOME: home, LOG_LEVEL: 'warn' }).err).not.toContain(
      'tightened',
    );
  });

  it('a garbage bridge.db, and a truncated one', () => {
    const garbage = dir('garbage-home');
    fs.writeFileSync(path.join(garbage, 'bridge.db'), Buffer.alloc(5000, 0x5a));
    expectOneLine(
      cli(['status'], { PHASEBRIDGE_HOME: garbage }),
      1,
      `phasebridge: ${path.join(garbage, 'bridge.db')} is not a usable bridge.db (file is not a database): move it aside to start an empty one (bindings, allowlists and agents are then lost), or restore it from a backup`,
    );

    const cut = dir('truncated-home');
    expect(cli(['migrate'], { PHASEBRIDGE_HOME: cut }).code).toBe(0);
    const file = path.join(cut, 'bridge.db');
    fs.writeFileSync(file, fs.readFileSync(file).subarray(0, 3000));
    expectOneLine(
      cli(['status'], { PHASEBRIDGE_HOME: cut }),
      1,
      /^phasebridge: \S+bridge\.db is not a usable bridge\.db \(.+\): move it aside to start an empty one .*, or restore it from a backup$/,
    );
  });

  it('a folder where bridge.db should be; LOG_LEVEL=debug adds the stack for developers', () => {
    const home = dir('dir-db-home');
    fs.mkdirSync(path.join(home, 'bridge.db'));
    const line = `phasebridge: ${path.join(home, 'bridge.db')} is a folder, but bridge.db must be a file: move the folder aside (a new bridge.db is then created) or set PHASEBRIDGE_HOME to another folder`;
    expectOneLine(cli(['status'], { PHASEBRIDGE_HOME: home }), 1, line);
    const debug = cli(['status'], { PHASEBRIDGE_HOME: home, LOG_LEVEL: 'debug' });
    expect(debug.err).toMatch(/^\s+at /m);
    expect(debug.lines.at(-1)).toBe(line);
    expect(debug.code).toBe(1);
  });
});

describe('the workspace', () => {
  const home = path.join(root, 'ws-home');
  const run = (workspace: string) =>
    cli(['run', 'demo', '--spec', 'add a login page', '--workspace', workspace], {
      PHASEBRIDGE_HOME: home,
    });

  it.skipIf(!linux)('a path under /proc answers at once instead of hanging', () => {
    expectOneLine(
      run('/proc/self/nope'),
      1,
      'phasebridge: cannot create folder /proc/self/nope: /proc/self does not accept new folders: choose another path',
    );
    const serve = cli(['serve'], {
      PHASEBRIDGE_HOME: home,
      PHASEBRIDGE_PORT: '0',
      PHASEBRIDGE_WORKSPACE: '/proc/self/nope/deeper',
    });
    expectOneLine(
      serve,
      1,
      'phasebridge: cannot create folder /proc/self/nope: /proc/self does not accept new folders: choose another path',
    );
  });

  it('a file on the way (ENOTDIR) is named; a file as the workspace is bad usage', () => {
    const file = path.join(root, 'plain-file');
    fs.writeFileSync(file, 'x\n');
    expectOneLine(
      run(path.join(file, 'ws')),
      1,
      `phasebridge: ${file} is a file, not a folder: move it aside or choose another path`,
    );
    expectOneLine(run(file), 2, `phasebridge: workspace ${file} is not a folder`);
  });

  it.skipIf(!linux)('a folder the system refuses (EPERM/EACCES)', () => {
    expectOneLine(
      run('/sys/nope'),
      1,
      /^phasebridge: (operation not permitted|permission denied) on \/sys\/nope: let the user running phasebridge read and write it \(chown\/chmod\), or choose another path$/,
    );
  });
});

describe('YAML alias bombs', () => {
  // Nine levels of nine aliases: 9^9 nodes once expanded.
  const bomb = [
    'a0: &a0 ["x","x","x","x","x","x","x","x","x"]',
    ...Array.from({ length: 9 }, (_, i) => `a${i + 1}: &a${i + 1} [${`*a${i},`.repeat(8)}*a${i}]`),
  ].join('\n');

  it('in a workflow: a workflow problem, exit 2', () => {
    const file = path.join(root, 'bomb.workflow.yaml');
    fs.writeFileSync(file, `${bomb}\n`);
    const r = cli(['run', file, '--spec', 'x', '--workspace', path.join(root, 'bomb-ws')], {
      PHASEBRIDGE_HOME: path.join(root, 'bomb-home'),
    });
    expectOneLine(
      r,
      2,
      `phasebridge: ${file}: (root): YAML error: Excessive alias count indicates a resource exhaustion attack: use fewer aliases (*name), at most 100 expansions`,
    );
  });

  it('in the config file: a configuration problem, exit 1', () => {
    const file = path.join(root, 'bomb.config.yaml');
    fs.writeFileSync(file, `${bomb}\n`);
    const r = cli(['status'], {
      PHASEBRIDGE_HOME: path.join(root, 'bomb-home'),
      PHASEBRIDGE_CONFIG: file,
    });
    expect(r.err).not.toMatch(/^\s+at /m);
    expect(r.lines).toEqual([
      'phasebridge: invalid configuration (1 problem(s)):',
      `  - ${file}: is not valid YAML (Excessive alias count indicates a resource exhaustion attack). Fix: use fewer aliases (*name) in it`,
    ]);
    expect(r.code).toBe(1);
  });
});

describe('the HTTP port', () => {
  it('a busy port names the port and the fix', async () => {
    const holder: Server = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const { port } = holder.address() as { port: number };
    try {
      const r = cli(['serve'], {
        PHASEBRIDGE_HOME: path.join(root, 'port-home'),
        PHASEBRIDGE_PORT: String(port),
      });
      expectOneLine(
        r,
        1,
        `phasebridge: port ${port} on 127.0.0.1 is in use: stop the other process or set PHASEBRIDGE_PORT`,
      );
    } finally {
      await new Promise<void>((resolve) => holder.close(() => resolve()));
    }
  });
});

describe('a full disk on a commit', () => {
  it('approve says "no space left" on the run folder, exit 1', (ctx) => {
    // A real full file system needs a mount (root); elsewhere this is skipped rather than faked.
    const mnt = dir('mnt');
    const mounted =
      linux &&
      isRoot &&
      spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=512k', 'tmpfs', mnt]).status === 0;
    if (!mounted)
      ctx.skip(
        'needs root (and Linux) to mount a small tmpfs: run as root, e.g. in the CI container',
      );
    onTestFinished(() => {
      spawnSync('umount', [mnt]);
    });
    const env = { PHASEBRIDGE_HOME: path.join(root, 'full-home') };
    const workspace = path.join(mnt, 'ws');
    const started = cli(['run', 'demo', '--spec', 'add x', '--workspace', workspace], env);
    expect(started.code).toBe(0);
    const runId = /phasebridge approve (\S+)/.exec(started.out)?.[1];
    expect(runId).toBeDefined();

    const fd = fs.openSync(path.join(mnt, 'filler'), 'w');
    try {
      for (;;) fs.writeSync(fd, Buffer.alloc(4096, 1));
    } catch (err) {
      expect((err as NodeJS.ErrnoException).code).toBe('ENOSPC');
    } finally {
      fs.closeSync(fd);
    }
    expectOneLine(
      cli(['approve', runId!], env),
      1,
      new RegExp(`^phasebridge: no space left on ${workspace}/\\S+: free some space, then retry$`),
    );
  });
});
