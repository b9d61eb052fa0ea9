import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { MANY_STEPS_TIMEOUT_MS, runCli } from './support.ts';

describe('phasebridge worker options', () => {
  it('refuses --label and --engines without REDIS_URL, and unknown engines, before starting', () => {
    const label = cli('worker', '--label', 'gpu');
    expect(label.code).not.toBe(0);
    expect(label.err).toContain('--label and --engines need the BullMQ queue: set REDIS_URL');
    const engines = cli('worker', '--engines', 'claude,gpt');
    expect(engines.code).not.toBe(0);
    expect(engines.err).toContain('--engines gpt: engines are command, claude, codex');
    const bad = cli('worker', '--label', 'no spaces');
    expect(bad.err).toContain('--label no spaces: a label is');
  });
});

const BIN = resolve(import.meta.dirname, '../../bin/phasebridge.js');
const root = mkdtempSync(join(tmpdir(), 'pb-cli-worker-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const home = join(root, 'home');
const ws = join(root, 'ws');
const cli = (...args: string[]) => runCli(args, home, root);

/** Resolves with run.json once `check` holds for it (the worker works in another process). */
async function runJsonWhen(
  runId: string,
  check: (run: { status: string; cursor: number }) => boolean,
) {
  const file = join(ws, '.phasebridge', 'runs', runId, 'run.json');
  for (let i = 0; i < 600; i++) {
    try {
      const run = JSON.parse(readFileSync(file, 'utf8'));
      if (check(run)) return run;
    } catch {
      // not written yet, or caught mid-rename
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`run ${runId} never reached the expected state`);
}

describe('phasebridge worker with detached commands', () => {
  it('runs the jobs that `run --detach` and `approve --detach` queue, and stops on SIGTERM', {
    timeout: MANY_STEPS_TIMEOUT_MS,
  }, async () => {
    const worker = spawn(process.execPath, [BIN, 'worker', '--concurrency', '1'], {
      cwd: root,
      env: {
        PATH: process.env.PATH,
        PHASEBRIDGE_HOME: home,
        LOG_LEVEL: 'silent',
        DEMO_AGENT_BEHAVIOUR: 'sleep=20',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    worker.stdout.on('data', (d) => {
      out += d;
    });
    const exited = new Promise<number | null>((r) => worker.on('exit', (code) => r(code)));
    try {
      const start = cli('run', 'demo', '--workspace', ws, '--spec', 'detached run', '--detach');
      expect(start.code).toBe(0);
      const runId = /phasebridge status (\S+)/.exec(start.out)?.[1];
      expect(start.out).toContain(`run ${runId} is running step plan; it goes on in`);

      // --follow prints the agent output as the worker runs the step, and ends once the run waits.
      const planLog = cli('logs', runId!, '--follow');
      expect(planLog.code).toBe(0);
      expect(planLog.out).toContain('==> plan (attempt 1) <==');
      expect(planLog.out).toContain('demo-agent: spec: detached run');
      await runJsonWhen(runId!, (r) => r.status === 'awaiting');

      const approve = cli('approve', runId!, '--detach');
      expect(approve.code).toBe(0);
      const reviewLog = cli('logs', runId!, '--follow');
      expect(reviewLog.out).toContain('==> review (attempt 1) <==');
      const run = await runJsonWhen(runId!, (r) => r.status === 'awaiting' && r.cursor === 2);
      expect(run.checkpoint.stepId).toBe('review');
    } finally {
      worker.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
    expect(out).toContain('running jobs from bridge.db');
    expect(out).toContain('worker stopped');
  });
});
