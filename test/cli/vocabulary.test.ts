/**
 * The chat verbs' CLI twins through the real `phasebridge` binary: runs, workflows, whoami,
 * bindings, unbind, access, pair and `changes` (alias `loop`); refs refused with the expected form; a run of an
 * unknown workflow creates nothing.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from './support.ts';

const root = mkdtempSync(join(tmpdir(), 'pb-cli-vocab-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const home = join(root, 'home');
const ws = join(root, 'ws');
mkdirSync(ws);
const cli = (...args: string[]) => runCli(args, home, root);

describe('the chat vocabulary in the CLI', () => {
  it('refuses malformed chat and user refs with the expected form, exit 2', () => {
    const refused: [args: string[], expected: string][] = [
      [['bind', 'telegram:abc', '--workspace', ws], 'expected telegram:<chat id>[:<topic id>]'],
      [['allow', 'telegram:alice', '--role', 'viewer'], 'expected telegram:<numeric user id>'],
      [['unbind', 'slack:general'], 'expected slack:<team id>:<channel id>[:<thread ts>]'],
    ];
    for (const [args, expected] of refused) {
      const res = cli(...args);
      expect({ args, code: res.code }).toEqual({ args, code: 2 });
      expect(res.err).toContain(expected);
    }
  });

  it('creates nothing when the workflow of a run does not exist', () => {
    const target = join(root, 'never-made');
    const res = cli('run', 'nosuch', '--workspace', target, '--spec', 'x');
    expect(res.code).toBe(1);
    expect(res.err).toContain('no workflow "nosuch"');
    expect(existsSync(target)).toBe(false);
  });

  it('binds, lists bindings and roles, unbinds, and answers whoami, runs, workflows, pair', () => {
    expect(cli('bind', 'telegram:-1001234', '--workspace', ws, '--workflow', 'demo').code).toBe(0);
    expect(
      cli('allow', 'telegram:42', '--role', 'approver', '--chat', 'telegram:-1001234').code,
    ).toBe(0);
    expect(cli('allow', 'slack:U0ADMIN', '--role', 'admin').code).toBe(0);
    expect(cli('bindings').out).toBe(
      `Bound chats (1):\n• telegram:-1001234 → ${ws} (default workflow demo)\n`,
    );
    expect(cli('access').out).toBe(
      'Globally:\n• slack:U0ADMIN — admin\nIn telegram:-1001234:\n• telegram:42 — approver\n',
    );
    expect(cli('unbind', 'telegram:-1001234').out).toBe(
      'telegram:-1001234 is not served any more; its roles are gone too.\n',
    );
    const again = cli('unbind', 'telegram:-1001234');
    expect(again.code).toBe(1);
    expect(again.err).toContain('telegram:-1001234 was not bound.');
    expect(cli('access').out).toBe('Globally:\n• slack:U0ADMIN — admin\n');

    expect(cli('whoami').out).toMatch(
      new RegExp(`^You are cli:${userInfo().username} \\(the CLI user\\)\\.`),
    );
    expect(cli('runs').code).toBe(0);
    expect(cli('workflows', '--workspace', ws).out).toMatch(/^Workflows:\n(• .*\n)*• demo — /);
    expect(cli('pair').out).toMatch(/^Pairing code: [A-Z2-9]{10} \(valid 10 minutes, once\)\./);
    expect(cli('changes', '--help').out).toContain('Usage: phasebridge changes|loop');
  });
});
