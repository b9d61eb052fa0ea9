import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const BIN = resolve(import.meta.dirname, '../../bin/phasebridge.js');
const root = mkdtempSync(join(tmpdir(), 'pb-cli-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Runs the real CLI in a child process with its own PHASEBRIDGE_HOME. */
function cli(args: string[], home = join(root, 'home')) {
  const res = spawnSync(process.execPath, [BIN, ...args], {
    cwd: root,
    env: { PATH: process.env.PATH, PHASEBRIDGE_HOME: home, LOG_LEVEL: 'silent' },
    encoding: 'utf8',
  });
  return { code: res.status, out: res.stdout, err: res.stderr };
}

describe('phasebridge CLI', () => {
  it('prints help for the program and every subcommand', () => {
    const top = cli(['--help']);
    expect(top.code).toBe(0);
    for (const sub of ['migrate', 'doctor', 'allow', 'deny', 'bind', 'agents', 'serve']) {
      expect(top.out).toContain(sub);
    }
    const allow = cli(['allow', '--help']);
    expect(allow.code).toBe(0);
    expect(allow.out).toContain('--role <role>');
  });

  it('migrates once, then has nothing to do; bridge.db is private', () => {
    const home = join(root, 'migrate-home');
    const first = cli(['migrate'], home);
    expect(first.code).toBe(0);
    expect(first.out).toMatch(/applied 0001_initial/);
    const second = cli(['migrate'], home);
    expect(second.code).toBe(0);
    expect(second.out).toMatch(/up to date/);
    expect(statSync(join(home, 'bridge.db')).mode & 0o777).toBe(0o600);
    expect(statSync(home).mode & 0o777).toBe(0o700);
  });

  it('refuses an unknown role with the usage and exit 2, naming the valid roles', () => {
    const res = cli(['allow', 'telegram:1', '--role', 'boss']);
    expect(res.code).toBe(2);
    expect(res.err).toContain('viewer, operator, approver, admin');
    expect(res.err).toContain('Usage: phasebridge allow');
  });

  it('answers a typo with "did you mean" first and the usage in one line, exit 2', () => {
    const top = cli(['staus']);
    expect(top.code).toBe(2);
    expect(withoutBuild(top.err).trim().split('\n')).toEqual([
      "error: did you mean phasebridge status? (unknown command 'staus')",
      'Usage: phasebridge <command> [options] (`phasebridge --help` lists the commands)',
    ]);
    const sub = cli(['agents', 'ad', 'planner']);
    expect(withoutBuild(sub.err).trim().split('\n')[0]).toBe(
      "error: did you mean phasebridge agents add? (unknown command 'ad')",
    );
    const option = cli(['status', '--jsn']);
    expect(option.code).toBe(2);
    expect(withoutBuild(option.err).trim().split('\n')).toEqual([
      "error: did you mean --json? (unknown option '--jsn')",
      'Usage: phasebridge status [options] [run] (`phasebridge status --help` for the options)',
    ]);
  });

  it('answers a domain error with one line and exit 1', () => {
    const res = cli(['allow', 'telegram:1', '--role', 'approver', '--chat', 'telegram:-42']);
    expect(res.code).toBe(1);
    expect(res.err.trim().split('\n')).toEqual([
      'phasebridge: telegram:-42 is not bound; run `phasebridge bind telegram:-42 --workspace DIR` first',
    ]);
  });

  it('binds a chat, allows a user in it, and keeps agent names unique', () => {
    const ws = join(root, 'ws');
    mkdirSync(ws, { recursive: true });
    expect(cli(['bind', 'telegram:-7', '--workspace', ws]).code).toBe(0);
    const allowed = cli(['allow', 'telegram:9', '--role', 'approver', '--chat', 'telegram:-7']);
    expect(allowed.out).toContain('telegram:9 is now approver in telegram:-7');
    expect(
      cli(['agents', 'add', 'lint', '--engine', 'command', '--', 'npm', 'run', 'lint']).code,
    ).toBe(0);
    const dup = cli(['agents', 'add', 'lint', '--engine', 'command', '--', 'true']);
    expect(dup.code).toBe(1);
    expect(dup.err).toContain("an agent named 'lint' already exists");
    expect(cli(['agents', 'list']).out).toContain('argv=["npm","run","lint"]');
    expect(cli(['deny', 'telegram:9', '--chat', 'telegram:-7']).out).toContain(
      'has no role in telegram:-7',
    );
  });

  it('agents add: four-eyes and the request expiry of ask, refused on other postures', () => {
    const asker = cli([
      'agents',
      'add',
      'asker',
      '--engine',
      'claude',
      '--permissions',
      'ask',
      '--four-eyes',
      '--ask-expires-in',
      '5m',
    ]);
    expect(asker.code).toBe(0);
    expect(asker.out).toContain('permissions=ask (four-eyes; requests expire in 5m)');
    const wrong = cli([
      'agents',
      'add',
      'e',
      '--engine',
      'claude',
      '--permissions',
      'edit',
      '--four-eyes',
    ]);
    expect(wrong.code).toBe(2);
    expect(wrong.err).toContain('--four-eyes and --ask-expires-in need --permissions ask');
    const bad = cli([
      'agents',
      'add',
      'b',
      '--engine',
      'claude',
      '--permissions',
      'ask',
      '--ask-expires-in',
      'soon',
    ]);
    expect(bad.code).toBe(2);
    expect(bad.err).toContain("--ask-expires-in 'soon' is not a duration");
    // Nothing was added by the refused ones.
    const list = cli(['agents', 'list']).out;
    expect(list).toContain('asker');
    expect(list).not.toContain('permissions=edit');
  });

  it('reports a bad configuration with every problem and exit 1', () => {
    const res = spawnSync(process.execPath, [BIN, 'migrate'], {
      cwd: root,
      env: { PATH: process.env.PATH, PHASEBRIDGE_PORT: 'x', LOG_LEVEL: 'loud' },
      encoding: 'utf8',
    });
    expect(res.status).toBe(1);
    expect(res.stderr).toContain('2 problem(s)');
    expect(res.stderr).toContain('PHASEBRIDGE_PORT');
    expect(res.stderr).toContain('LOG_LEVEL');
  });
});

/** stderr without the bin's one-line note when it rebuilt dist/ first. */
function withoutBuild(err: string): string {
  return err.replace(/^phasebridge: building dist\/.*\n/m, '');
}
