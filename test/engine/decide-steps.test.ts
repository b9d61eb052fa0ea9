import { describe, expect, it } from 'vitest';
import { DEMO_WORKFLOW } from '../../src/engine/workflow/builtin.ts';
import { Harness, RUN_ID, T1, wf } from './harness.ts';

const RETRYING = wf(`
id: retrying
steps:
  - { id: build, agent: coder, prompt: build it, retries: { count: 2, backoff: 2s } }
  - { id: test, agent: tester, prompt: test it }
`);

describe('step reports from workers', () => {
  it('records start, session and chains on the current step', () => {
    const h = new Harness();
    h.start(DEMO_WORKFLOW);
    h.ok({ type: 'stepStarted', stepId: 'plan', attempt: 1 });
    h.ok({ type: 'sessionInitialized', stepId: 'plan', sessionId: 'sess-1', monitoringId: 7 });
    h.ok({ type: 'chainCompleted', stepId: 'plan', chainIndex: 1 });
    h.ok({ type: 'chainCompleted', stepId: 'plan', chainIndex: 0 });
    expect(h.step('plan')).toMatchObject({
      status: 'running',
      startedAt: '2026-11-29T14:30:01.000Z',
      sessionId: 'sess-1',
      monitoringId: 7,
      completedChains: [0, 1],
    });
  });

  it('refuses a chain reported twice', () => {
    const h = new Harness();
    h.start(DEMO_WORKFLOW);
    h.ok({ type: 'stepStarted', stepId: 'plan', attempt: 1 });
    h.ok({ type: 'chainCompleted', stepId: 'plan', chainIndex: 0 });
    expect(h.rejected({ type: 'chainCompleted', stepId: 'plan', chainIndex: 0 }).message).toBe(
      'chain 0 of step plan is already completed',
    );
  });

  it('refuses stale reports: wrong attempt, step not running, duplicate result', () => {
    const h = new Harness();
    h.start(DEMO_WORKFLOW);
    expect(h.rejected({ type: 'stepStarted', stepId: 'plan', attempt: 2 }).message).toBe(
      'stale report for step plan: attempt 2 is not the current attempt 1',
    );
    expect(h.rejected({ type: 'stepStarted', stepId: 'build', attempt: 1 }).message).toBe(
      'stale report for step build: the step is pending, not queued',
    );
    expect(
      h.rejected({ type: 'sessionInitialized', stepId: 'plan', sessionId: 's', monitoringId: 1 })
        .message,
    ).toBe('stale report for step plan: the step is queued, not running');
    h.finish();
    const dup = h.rejected({
      type: 'stepFinished',
      stepId: 'plan',
      attempt: 1,
      exitCode: 0,
      directive: { action: 'continue' },
      telemetry: T1,
    });
    expect(dup.message).toBe(
      'stale report for step plan: run 2026-11-29T143000Z-test-run is awaiting',
    );
  });

  it('refuses reports about a step the workflow does not have', () => {
    const h = new Harness();
    h.start(DEMO_WORKFLOW);
    expect(h.rejected({ type: 'stepStarted', stepId: 'deploy', attempt: 1 })).toEqual({
      code: 'NOT_FOUND',
      message: `run ${RUN_ID} has no step deploy`,
    });
  });

  it('refuses negative telemetry', () => {
    const h = new Harness();
    h.start(DEMO_WORKFLOW);
    const r = h.rejected({
      type: 'stepFinished',
      stepId: 'plan',
      attempt: 1,
      exitCode: 0,
      directive: { action: 'continue' },
      telemetry: { ...T1, costUsd: -1 },
    });
    expect(r).toEqual({
      code: 'INVALID_INPUT',
      message: 'telemetry values must be finite numbers >= 0',
    });
  });

  it('completes a step, sums its telemetry and queues the next one', () => {
    const h = new Harness();
    h.start(wf('id: two\nsteps: [{ id: a, agent: x, prompt: p }, { id: b, agent: y, prompt: q }]'));
    const { types, effects } = h.finish();
    expect(types).toEqual(['stepCompleted', 'stepQueued']);
    expect(effects).toMatchObject([
      { type: 'enqueueStep', stepId: 'b', agent: 'y', prompt: 'q', attempt: 1 },
    ]);
    expect(h.step('a')).toMatchObject({
      status: 'completed',
      exitCode: 0,
      telemetry: T1,
      directive: { action: 'continue' },
    });
    h.finish();
    expect(h.run.status).toBe('completed');
    expect(h.run.outcome).toEqual({ reason: 'all steps completed' });
  });

  it('retries a failed step with exponential backoff as new attempts, then blocks', () => {
    const h = new Harness();
    h.start(RETRYING);
    let r = h.fail('spawn ENOENT');
    expect(r.types).toEqual(['stepFailed', 'stepQueued']);
    expect(r.effects).toEqual([
      {
        type: 'enqueueStep',
        runId: RUN_ID,
        stepId: 'build',
        attempt: 2,
        agent: 'coder',
        prompt: 'build it',
        delayMs: 2000,
      },
    ]);
    r = h.fail('timeout');
    expect(r.effects).toMatchObject([{ attempt: 3, delayMs: 4000 }]);
    r = h.fail('timeout again');
    expect(r.types).toEqual(['stepFailed', 'runBlocked']);
    expect(r.effects).toEqual([]);
    expect(h.run.status).toBe('blocked');
    expect(h.run.blocked).toEqual({
      kind: 'retries-exhausted',
      reason: 'step build failed after 3 attempts: timeout again',
    });
    expect(h.step('build')).toMatchObject({ status: 'failed', error: 'timeout again', attempt: 3 });
  });

  it('treats a non-zero exit code as a failed attempt', () => {
    const h = new Harness();
    h.start(DEMO_WORKFLOW);
    h.ok({ type: 'stepStarted', stepId: 'plan', attempt: 1 });
    h.ok({
      type: 'stepFinished',
      stepId: 'plan',
      attempt: 1,
      exitCode: 3,
      directive: { action: 'continue' },
      telemetry: T1,
    });
    expect(h.run.blocked).toEqual({
      kind: 'failure',
      reason: 'step plan failed: agent exited with code 3',
    });
    expect(h.step('plan').telemetry).toEqual(T1);
  });

  it('accepts a failure reported before the job started (spawn error)', () => {
    const h = new Harness();
    h.start(DEMO_WORKFLOW);
    h.ok({ type: 'stepFailed', stepId: 'plan', attempt: 1, error: 'agent binary not found' });
    expect(h.run.blocked?.kind).toBe('failure');
  });
});

describe('recoverInterrupted', () => {
  it('resumes the interrupted step as a new attempt when resumeFromLastStep', () => {
    const h = new Harness();
    h.start(DEMO_WORKFLOW);
    h.ok({ type: 'stepStarted', stepId: 'plan', attempt: 1 });
    h.ok({ type: 'sessionInitialized', stepId: 'plan', sessionId: 'sess-1', monitoringId: 1 });
    const { types, effects } = h.ok({ type: 'recoverInterrupted' });
    expect(types).toEqual(['stepInterrupted', 'stepQueued']);
    expect(effects).toMatchObject([{ type: 'enqueueStep', stepId: 'plan', attempt: 2 }]);
    expect(h.step('plan')).toMatchObject({ status: 'queued', sessionId: 'sess-1' });
    expect(h.rejected({ type: 'stepStarted', stepId: 'plan', attempt: 1 }).message).toContain(
      'attempt 1 is not the current attempt 2',
    );
  });

  it('blocks as interrupted otherwise, and resume or retry continue it', () => {
    for (const how of ['resume', 'retry'] as const) {
      const h = new Harness();
      h.start(DEMO_WORKFLOW, { resumeFromLastStep: false });
      h.ok({ type: 'stepStarted', stepId: 'plan', attempt: 1 });
      h.ok({ type: 'recoverInterrupted' });
      expect(h.run.status).toBe('blocked');
      expect(h.run.blocked).toEqual({
        kind: 'interrupted',
        reason: 'interrupted during step plan: resume or retry',
      });
      const { types, effects } = h.ok({ type: how });
      expect(types).toEqual(['runResumed', 'stepQueued']);
      expect(effects).toMatchObject([{ stepId: 'plan', attempt: 2 }]);
    }
  });

  it('refuses when nothing is in flight', () => {
    const h = new Harness();
    h.start(DEMO_WORKFLOW);
    h.finish();
    expect(h.rejected({ type: 'recoverInterrupted' }).message).toBe(
      `nothing was interrupted: run ${RUN_ID} has no step in flight`,
    );
  });
});
