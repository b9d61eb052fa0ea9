/**
 * `phasebridge logs` over a workspace an agent has tampered with: a step log replaced by a link
 * is refused with a one-line error naming it, and the linked file is never printed; another
 * run's logs still print. Real CLI processes.
 */
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { MANY_STEPS_TIMEOUT_MS, runCli } from './support.ts';

const root = mkdtempSync(join(tmpdir(), 'pb-cli-logs-untrusted-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const home = join(root, 'home');
const cli = (...args: string[]) => runCli(args, home, root);

/** Starts the demo workflow in `ws`; returns the run id once it waits at its first checkpoint. */
function startDemo(ws: string): string {
  const start = cli('run', 'demo', '--workspace', ws, '--spec', 'add login');
  expect(start.code).toBe(0);
  return /phasebridge approve (\S+)/.exec(start.out)![1]!;
}

describe('phasebridge logs with a planted link', () => {
  it('refuses the link, naming it, prints nothing of its target, and other runs print', {
    timeout: MANY_STEPS_TIMEOUT_MS,
  }, () => {
    const secret = join(root, 'secret.txt');
    writeFileSync(secret, 'root:x:0:0:the-secret-line\n');
    const hostile = startDemo(join(root, 'ws-hostile'));
    const other = startDemo(join(root, 'ws-other'));
    const log = join(root, 'ws-hostile', '.phasebridge', 'runs', hostile, 'logs', 'plan-1.log');
    rmSync(log);
    symlinkSync(secret, log);

    for (const args of [
      ['logs', hostile, 'plan'],
      ['logs', hostile],
    ]) {
      const res = cli(...args);
      expect(res.code).toBe(1);
      expect(res.err.trim()).toBe(
        `phasebridge: refusing to follow the symlink ${log} planted in the workspace`,
      );
      expect(res.out).not.toContain('the-secret-line');
    }

    const fine = cli('logs', other, 'plan');
    expect(fine.code).toBe(0);
    expect(fine.out).toContain('demo-agent: spec: add login');
  });
});
