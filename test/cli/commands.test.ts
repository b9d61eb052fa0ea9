import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from './support.ts';

const root = mkdtempSync(join(tmpdir(), 'pb-cli-cmd-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const home = join(root, 'home');
const cli = (...args: string[]) => runCli(args, home, root);

describe('run, status and answer commands: arguments and refusals', () => {
  it('refuses reject without --reason with the usage and exit 2', () => {
    const res = cli('reject', '2026-11-29T143000Z-add-login');
    expect(res.code).toBe(2);
    expect(res.err).toContain("required option '--reason <text>' not specified");
    expect(res.err).toContain('Usage: phasebridge reject');
  });

  it('refuses run without a spec, or with both spec options, exit 2', () => {
    const none = cli('run', 'demo', '--workspace', join(root, 'ws'));
    expect(none.code).toBe(2);
    expect(none.err.trim()).toBe(
      'phasebridge: say what to build with --spec TEXT or --spec-file FILE',
    );
    const both = cli(
      'run',
      'demo',
      '--workspace',
      join(root, 'ws'),
      '--spec',
      'x',
      '--spec-file',
      'f',
    );
    expect(both.code).toBe(2);
  });

  it('answers an unknown run with one line and exit 1', () => {
    const res = cli('approve', '2026-11-29T143000Z-nope');
    expect(res.code).toBe(1);
    expect(res.err.trim().split('\n')).toHaveLength(1);
    expect(res.err).toContain('2026-11-29T143000Z-nope');
  });

  it('shows an empty runs table with how to start a run', () => {
    const res = cli('status');
    expect(res.code).toBe(0);
    expect(res.out).toMatch(/^no runs yet; start one with `phasebridge run demo/);
  });
});
