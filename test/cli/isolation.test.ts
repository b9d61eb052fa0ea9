/**
 * One bad run never stops the others: a symlink planted as one run's template.json fails only
 * that run's commands (one line, exit 1), while another workspace's run starts and `serve` starts.
 */
import { spawn } from 'node:child_process';
import {
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { until } from '../contracts/platform-driver.ts';
import { MANY_STEPS_TIMEOUT_MS, runCli } from './support.ts';

const root = mkdtempSync(join(tmpdir(), 'pb-cli-isolation-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const home = join(root, 'home');
const cli = (...args: string[]) => runCli(args, home, root);
const BIN = resolve(import.meta.dirname, '../../bin/phasebridge.js');

describe('a link planted in one workspace', () => {
  it('fails only that run, and serve still starts', {
    timeout: MANY_STEPS_TIMEOUT_MS,
  }, async () => {
    const wsA = join(root, 'a');
    expect(
      cli('run', 'demo', '--workspace', wsA, '--spec', 'a', '--layout', 'codemachine').code,
    ).toBe(0);
    const runA = readdirSync(join(wsA, '.phasebridge', 'runs'))[0]!;
    const outside = join(root, 'outside.txt');
    writeFileSync(outside, 'not yours');
    const template = join(wsA, '.codemachine', 'template.json');
    unlinkSync(template);
    symlinkSync(outside, template);

    const other = cli('run', 'demo', '--workspace', join(root, 'b'), '--spec', 'b');
    expect(other.code).toBe(0);
    expect(other.out).toContain('awaiting approval of plan');

    const refused = cli('approve', runA);
    expect(refused.code).toBe(1);
    expect(refused.err.trim().split('\n')).toEqual([
      `phasebridge: refusing to follow the symlink ${template} planted in the workspace`,
    ]);
    expect(readFileSync(outside, 'utf8')).toBe('not yours');

    const serve = spawn(process.execPath, [BIN, 'serve'], {
      cwd: root,
      env: {
        PATH: process.env.PATH,
        PHASEBRIDGE_HOME: home,
        PHASEBRIDGE_PORT: '0',
        LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    serve.stdout.on('data', (c: Buffer) => {
      out += c.toString();
    });
    serve.stderr.on('data', (c: Buffer) => {
      out += c.toString();
    });
    try {
      await until(() => out.includes('phasebridge is running.'), 'serve to start', 30_000);
      await until(() => out.includes('run needs attention'), 'the bad run to be reported', 10_000);
      expect(out).toContain(`refusing to follow the symlink ${template} planted in the workspace`);
    } finally {
      serve.kill('SIGTERM');
      await new Promise((r) => serve.on('exit', r));
    }
    expect(readFileSync(outside, 'utf8')).toBe('not yours');
  });
});
