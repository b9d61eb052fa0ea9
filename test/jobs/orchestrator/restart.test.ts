/** Restarts: recovery of awaiting runs, vanished jobs, outcomes from while we were down, locks. */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConflictError } from '../../../src/errors.ts';
import { startJobWorker } from '../../../src/jobs/orchestrator/worker.ts';
import { createSqliteQueue } from '../../../src/jobs/queue/sqlite-driver.ts';
import { createLogger } from '../../../src/log.ts';
import {
  ALICE,
  approve,
  ledgerOf,
  makeEnv,
  repeatedKeys,
  type TestEnv,
  waitFor,
} from './helpers.ts';

let env: TestEnv | undefined;
afterEach(async () => {
  await env?.dispose();
  env = undefined;
});

describe('restart', () => {
  it('an orchestrator closed while awaiting is recovered by a new one, and approve works', async () => {
    env = await makeEnv();
    const first = await env.open();
    const run = await first.startRun({
      workflow: 'demo',
      workspace: env.workspace,
      spec: 'restart me',
      actor: ALICE,
    });
    expect((await first.waitUntilIdle(run.id)).status).toBe('awaiting');
    await first.close();

    const second = await env.open();
    expect((await second.getRun(run.id)).checkpoint?.stepId).toBe('plan');
    let state = await approve(second, run.id, 'cli:a1');
    expect(state.checkpoint?.stepId).toBe('review');
    state = await approve(second, run.id, 'cli:a2');
    expect(state.status).toBe('completed');
    expect(repeatedKeys(ledgerOf(state))).toEqual([]);
  });

  it('blocks a run interrupted inside a step when resumeFromLastStep is false', async () => {
    env = await makeEnv();
    const first = await env.open({ worker: false });
    const run = await first.startRun({
      workflow: 'demo',
      workspace: env.workspace,
      spec: 'no resume',
      actor: ALICE,
      resumeFromLastStep: false,
    });
    // The step was running when the process died and its job is gone with it.
    const started = await first.command(run.id, 'test:started', {
      type: 'stepStarted',
      stepId: 'plan',
      attempt: 1,
      actor: ALICE,
    });
    expect(started.ok).toBe(true);
    await first.close();
    env.db.sqlite.prepare('DELETE FROM jobs WHERE id = ?').run(`${run.id}:plan:1`);

    const second = await env.open();
    const state = await second.getRun(run.id);
    expect(state.status).toBe('blocked');
    expect(state.blocked).toEqual({
      kind: 'interrupted',
      reason: 'interrupted during step plan: resume or retry',
    });
    expect(state.steps[0]!.attempt).toBe(1);
  });

  it('enqueues again the job of a queued step that never reached the queue: same attempt, once', async () => {
    env = await makeEnv();
    const first = await env.open({ worker: false });
    const run = await first.startRun({
      workflow: 'demo',
      workspace: env.workspace,
      spec: 'lost job',
      actor: ALICE,
    });
    const jobId = `${run.id}:plan:1`;
    expect((await env.queue.get(jobId))?.state).toBe('waiting');
    await first.close();
    // As if the process died (or lost its queue) between the commit and the enqueue.
    env.db.sqlite.prepare('DELETE FROM jobs WHERE id = ?').run(jobId);

    const second = await env.open();
    const state = await second.waitUntilIdle(run.id);
    expect(state.status).toBe('awaiting');
    // The step never started: its own job ran, not a second attempt.
    expect(state.steps[0]).toMatchObject({ status: 'completed', attempt: 1 });
    const entries = ledgerOf(state);
    expect(entries.map((e) => e.key).filter((k) => k.startsWith('recover:'))).toEqual([]);
    const events = entries.flatMap((e) => e.events);
    expect(events.filter((e) => e.type === 'stepInterrupted')).toEqual([]);
    expect(events.filter((e) => e.type === 'stepCompleted')).toHaveLength(1);
    expect((await env.queue.get(jobId))?.state).toBe('completed');
  });

  it('a run another live process holds, its queued step without a job: the job is enqueued at start-up', async () => {
    env = await makeEnv();
    // The old leader: it committed the step and keeps the run's lock, its enqueue never landed.
    const holder = await env.open({ worker: false });
    const run = await holder.startRun({
      workflow: 'demo',
      workspace: env.workspace,
      spec: 'enqueue cut off',
      actor: ALICE,
    });
    const jobId = `${run.id}:plan:1`;
    env.db.sqlite.prepare('DELETE FROM jobs WHERE id = ?').run(jobId);

    const next = await env.open();
    // The holder still drives the run: it applies the outcome of the job the new one queued.
    const state = await holder.waitUntilIdle(run.id);
    expect(state.status).toBe('awaiting');
    expect(state.steps[0]).toMatchObject({ status: 'completed', attempt: 1 });
    const events = ledgerOf(state).flatMap((e) => e.events);
    expect(events.filter((e) => e.type === 'stepQueued')).toHaveLength(1);
    expect(events.filter((e) => e.type === 'stepCompleted')).toHaveLength(1);
    await next.close();
  });

  it('hands back at once the step job a dead process held (not after its 30 s lease)', async () => {
    env = await makeEnv(); // the default lease: 30 s
    const first = await env.open({ worker: false });
    const run = await first.startRun({
      workflow: 'demo',
      workspace: env.workspace,
      spec: 'killed mid-step',
      actor: ALICE,
    });
    const started = await first.command(run.id, 'test:started', {
      type: 'stepStarted',
      stepId: 'plan',
      attempt: 1,
      actor: ALICE,
    });
    expect(started.ok).toBe(true);
    await first.close();
    // What a SIGKILLed serve leaves: its worker's lease on the job, 30 s from now.
    const dead = spawnSync(process.execPath, ['-e', '0']).pid;
    holdJob(env, `${run.id}:plan:1`, `${hostname()}:${dead}:w1`);

    const jobRow = () =>
      env!.db.sqlite.prepare('SELECT lease_owner FROM jobs WHERE id = ?').get(`${run.id}:plan:1`);
    const second = await env.open();
    // Start-up took it back from the dead owner (its lease still had ~30 s to run).
    expect(jobRow()).not.toEqual({ lease_owner: `${hostname()}:${dead}:w1` });
    const state = await second.waitUntilIdle(run.id);
    expect(state.status).toBe('awaiting');
    // The same attempt ran again (at-least-once), and completed once.
    expect(state.steps[0]).toMatchObject({ status: 'completed', attempt: 1 });
    const events = ledgerOf(state).flatMap((e) => e.events);
    expect(events.filter((e) => e.type === 'stepCompleted')).toHaveLength(1);
    expect((await env.queue.get(`${run.id}:plan:1`))?.attempts).toBe(2);
  });

  it('leaves a step job alone while the process holding it lives', async () => {
    env = await makeEnv();
    const first = await env.open({ worker: false });
    const run = await first.startRun({
      workflow: 'demo',
      workspace: env.workspace,
      spec: 'held elsewhere',
      actor: ALICE,
    });
    await first.close();
    const jobId = `${run.id}:plan:1`;
    holdJob(env, jobId, `${hostname()}:${process.ppid}:w1`);
    const second = await env.open();
    expect((await second.getRun(run.id)).status).toBe('active');
    expect(await env.queue.get(jobId)).toMatchObject({ state: 'active', attempts: 1 });
  });

  it('applies the stored outcome of a job that finished while no orchestrator listened', async () => {
    env = await makeEnv();
    const first = await env.open({ worker: false });
    const run = await first.startRun({
      workflow: 'demo',
      workspace: env.workspace,
      spec: 'ran alone',
      actor: ALICE,
    });
    await first.close();

    // A worker alone (as `phasebridge worker` would be) runs the job; nobody applies the outcome.
    const log = createLogger({ level: 'silent' });
    const worker = await startJobWorker({
      queue: env.queue,
      log,
      concurrency: 1,
      home: env.home,
    });
    await waitFor(async () => (await env!.queue.get(`${run.id}:plan:1`))?.state === 'completed');
    await worker.close();

    // A restarted bridge has a fresh queue instance (outcomes from before it are not pushed).
    const queue = createSqliteQueue({ db: env.db, pollMs: 30 });
    try {
      const second = await env.open({ queue });
      const state = await second.waitUntilIdle(run.id);
      expect(state.status).toBe('awaiting');
      expect(state.steps[0]).toMatchObject({ status: 'completed', attempt: 1 });
      const keys = ledgerOf(state).map((e) => e.key);
      expect(keys).toContain(`job:${run.id}:plan:1:finished`);
      await second.close();
    } finally {
      await queue.close();
    }
  });

  it('refuses a command while another orchestrator drives the run', async () => {
    env = await makeEnv();
    env.workflow(
      'slow',
      'id: slow\nsteps:\n  - id: a\n    agent: demo\n    prompt: "demo: sleep=1500"\n',
    );
    const driver = await env.open();
    const run = await driver.startRun({
      workflow: 'slow',
      workspace: env.workspace,
      spec: 's',
      actor: ALICE,
    });
    await waitFor(async () => (await driver.getRun(run.id)).steps[0]!.status === 'running');

    const other = await env.open({ worker: false });
    const attempt = other.command(run.id, 'cli:cancel-x', { type: 'cancel', actor: ALICE });
    await expect(attempt).rejects.toBeInstanceOf(ConflictError);
    await expect(attempt).rejects.toThrow(
      new RegExp(`run ${run.id} is being driven by pid ${process.pid}`),
    );
    expect((await other.getRun(run.id)).status).toBe('active'); // reading needs no lock

    const done = await driver.waitUntilIdle(run.id);
    expect(done.status).toBe('completed');
    // Once the run is idle its lock is released: the other process may act on it.
    const late = await other.command(run.id, 'cli:cancel-y', { type: 'cancel', actor: ALICE });
    expect(late.ok).toBe(false);
    expect(late.ok ? '' : late.rejection.message).toContain('is completed');
  });

  it('a bridge that lost its lease gives its runs up at once: the new leader commits while its step still runs', async () => {
    env = await makeEnv();
    env.workflow(
      'slow',
      'id: slow\nsteps:\n  - id: a\n    agent: demo\n    prompt: "demo: sleep=1500"\n',
    );
    const old = await env.open();
    const run = await old.startRun({
      workflow: 'slow',
      workspace: env.workspace,
      spec: 's',
      actor: ALICE,
    });
    await waitFor(async () => (await old.getRun(run.id)).steps[0]!.status === 'running');
    const lock = path.join(env.workspace, '.phasebridge', 'runs', run.id, 'lock');
    expect(fs.existsSync(lock)).toBe(true);

    await old.relinquishRuns('lease lost');
    // Its step still runs, yet its lock is gone: the new leader need not wait for its stop.
    expect(fs.existsSync(lock)).toBe(false);
    expect((await env.queue.get(`${run.id}:a:1`))?.state).toBe('active');
    const next = await env.open({ worker: false });
    const cancel = await next.command(run.id, 'cli:cancel-new', { type: 'cancel', actor: ALICE });
    expect(cancel.ok).toBe(true);

    // The old one writes nothing more, and says why.
    const refused = old.command(run.id, 'cli:cancel-old', { type: 'cancel', actor: ALICE });
    await expect(refused).rejects.toBeInstanceOf(ConflictError);
    await expect(refused).rejects.toThrow(/no longer leads \(lease lost\)/);
    await waitFor(async () => (await env!.queue.get(`${run.id}:a:1`))?.state !== 'active');
    const keys = ledgerOf(await next.getRun(run.id)).map((e) => e.key);
    expect(keys).toContain('cli:cancel-new');
    expect(keys).not.toContain('cli:cancel-old');
    expect(repeatedKeys(ledgerOf(await next.getRun(run.id)))).toEqual([]);
  });
});

/** What a serve's worker leaves on a job it holds: active, leased to `owner` for 30 s more. */
function holdJob(env: TestEnv, jobId: string, owner: string): void {
  env.db.sqlite
    .prepare(
      `UPDATE jobs SET state = 'active', lease_owner = ?, lease_expires_at = ?,
       lease_count = 1 WHERE id = ?`,
    )
    .run(owner, Date.now() + 30_000, jobId);
}
