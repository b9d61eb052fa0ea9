/**
 * `phasebridge resume` on a run whose driving `phasebridge run` was SIGKILLed mid-step: the
 * interrupted step is handed back to the queue at once (not when its 30 s lease runs out) and
 * the run goes on to its checkpoint.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { until } from '../contracts/platform-driver.ts';
import { MANY_STEPS_TIMEOUT_MS, runCli } from './support.ts';

const root = mkdtempSync(join(tmpdir(), 'pb-cli-resume-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const home = join(root, 'home');
const ws = join(root, 'ws');
const BIN = resolve(import.meta.dirname, '../../bin/phasebridge.js');

/** The jobs table row of the run's plan step, read as another process would. */
function planJob(runId: string): {
  state: string;
  lease_owner: string | null;
  lease_count: number;
} {
  const db = new Database(join(home, 'bridge.db'), { readonly: true });
  try {
    return db
      .prepare(
        "SELECT state, lease_owner, lease_count FROM jobs WHERE run_id = ? AND step_id = 'plan'",
      )
      .get(runId) as { state: string; lease_owner: string | null; lease_count: number };
  } finally {
    db.close();
  }
}

describe('resume after the driving process was killed', () => {
  it('hands the interrupted step back at once and drives the run on', {
    timeout: MANY_STEPS_TIMEOUT_MS,
  }, async () => {
    const run = spawn(
      process.execPath,
      [BIN, 'run', 'demo', '--workspace', ws, '--spec', 'add login'],
      {
        env: {
          PATH: process.env.PATH,
          PHASEBRIDGE_HOME: home,
          LOG_LEVEL: 'silent',
          DEMO_AGENT_BEHAVIOUR: 'sleep=1500',
        },
        stdio: 'ignore',
      },
    );
    let runId = '';
    await until(
      () => {
        try {
          runId = readdirSync(join(ws, '.phasebridge', 'runs'))[0] ?? '';
          return runId !== '' && planJob(runId)?.state === 'active';
        } catch {
          return false;
        }
      },
      'the plan step to run',
      60_000,
    );
    const exited = new Promise((r) => run.on('exit', r));
    run.kill('SIGKILL');
    await exited;
    expect(planJob(runId).state).toBe('active');

    const detached = runCli(['resume', runId, '--detach'], home, root);
    expect(detached.err).toBe('');
    expect(detached.code).toBe(0);
    // Back in the queue now, not after the dead worker's lease.
    expect(planJob(runId)).toMatchObject({ state: 'waiting', lease_owner: null });

    const resumed = runCli(['resume', runId], home, root);
    expect(resumed.code).toBe(0);
    expect(resumed.out).toContain('awaiting approval of plan');
    expect(planJob(runId)).toMatchObject({ state: 'completed', lease_count: 2 });
  });

  it('says precisely why not when the step is still running in a live process', {
    timeout: MANY_STEPS_TIMEOUT_MS,
  }, async () => {
    const ws2 = join(root, 'ws2');
    const run = spawn(
      process.execPath,
      [BIN, 'run', 'demo', '--workspace', ws2, '--spec', 'add login'],
      {
        env: {
          PATH: process.env.PATH,
          PHASEBRIDGE_HOME: home,
          LOG_LEVEL: 'silent',
          DEMO_AGENT_BEHAVIOUR: 'sleep=4000',
        },
        stdio: 'ignore',
      },
    );
    let runId = '';
    await until(
      () => {
        try {
          runId = readdirSync(join(ws2, '.phasebridge', 'runs'))[0] ?? '';
          return runId !== '' && planJob(runId)?.state === 'active';
        } catch {
          return false;
        }
      },
      'the plan step to run',
      60_000,
    );
    const refused = runCli(['resume', runId, '--detach'], home, root);
    expect(refused.code).toBe(1);
    expect(refused.err).toMatch(
      new RegExp(`run ${runId}: step plan is still running in pid ${run.pid}`),
    );
    await new Promise((r) => run.on('exit', r));
  });
});
