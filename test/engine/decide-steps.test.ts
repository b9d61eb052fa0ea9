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

describe('what a worker report must hold', () => {
  it('a session needs an id and a whole monitoring number from 0; a chain a whole index from 0', () => {
    const h = new Harness();
    h.start(DEMO_WORKFLOW);
    h.ok({ type: 'stepStarted', stepId: 'plan', attempt: 1 });
    const session = { type: 'sessionInitialized', stepId: 'plan' } as const;
    for (const bad of [
      { sessionId: '', monitoringId: 1 },
      { sessionId: 's', monitoringId: -1 },
      { sessionId: 's', monitoringId: 1.5 },
    ]) {
      expect(h.rejected({ ...session, ...bad })).toEqual({
        code: 'INVALID_INPUT',
        message: 'sessionId must be non-empty and monitoringId an integer >= 0',
      });
    }
    h.ok({ ...session, sessionId: 's', monitoringId: 0 });
    for (const chainIndex of [-1, 0.5]) {
      expect(h.rejected({ type: 'chainCompleted', stepId: 'plan', chainIndex })).toEqual({
        code: 'INVALID_INPUT',
        message: 'chainIndex must be an integer >= 0',
      });
    }
  });

  it('telemetry must be finite; zero is fine, and a failure’s telemetry counts', () => {
    const h = new Harness();
    h.start(RETRYING);
    const finish = {
      type: 'stepFinished',
      stepId: 'build',
      attempt: 1,
      exitCode: 0,
      directive: { action: 'continue' },
    } as const;
    for (const tokensIn of [Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(h.rejected({ ...finish, telemetry: { ...T1, tokensIn } }).code).toBe('INVALID_INPUT');
    }
    for (const field of ['tokensOut', 'cachedTokens'] as const) {
      expect(h.rejected({ ...finish, telemetry: { ...T1, [field]: -1 } }).code).toBe(
        'INVALID_INPUT',
      );
    }
    expect(
      h.rejected({
        type: 'stepFailed',
        stepId: 'build',
        attempt: 1,
        error: 'x',
        telemetry: { ...T1, costUsd: -1 },
      }).code,
    ).toBe('INVALID_INPUT');
    h.ok({ type: 'stepFailed', stepId: 'build', attempt: 1, error: 'x', telemetry: T1 });
    expect(h.step('build').telemetry).toEqual(T1);
    h.ok({
      ...finish,
      attempt: 2,
      telemetry: { tokensIn: 0, tokensOut: 0, cachedTokens: 0, costUsd: 0 },
    });
    expect(h.current).toBe('test');
  });

  it('a step that allows no retries blocks at its first failure', () => {
    const h = new Harness();
    h.start(
      wf('id: once\nsteps: [{ id: a, agent: x, prompt: p, retries: { count: 0, backoff: 1s } }]'),
    );
    expect(h.fail('no disk').types).toEqual(['stepFailed', 'runBlocked']);
    expect(h.run.blocked).toEqual({ kind: 'failure', reason: 'step a failed: no disk' });
  });

  it('a report while the run is paused is stale, whatever the step', () => {
    const h = new Harness();
    h.start(DEMO_WORKFLOW);
    h.ok({ type: 'pause' });
    expect(h.rejected({ type: 'stepStarted', stepId: 'plan', attempt: 1 }).message).toBe(
      `stale report for step plan: run ${RUN_ID} is blocked`,
    );
  });
});

describe('trigger reports', () => {
  const TRIGGERED = wf(`
id: triggered
steps:
  - { id: plan, agent: planner, prompt: plan it }
  - { id: build, agent: coder, prompt: build it }
`);

  it('are refused when no trigger waits, and when they name another step', () => {
    const h = new Harness();
    h.start(TRIGGERED);
    const report = { type: 'triggerFinished', stepId: 'plan', attempt: 1, exitCode: 0 } as const;
    expect(h.rejected(report).message).toBe(
      `stale trigger report for step plan: run ${RUN_ID} awaits no trigger`,
    );
    h.finish({ action: 'trigger', triggerAgentId: 'helper' });
    expect(h.rejected({ ...report, stepId: 'build' }).message).toBe(
      'stale trigger report: awaiting plan attempt 1',
    );
    h.ok({ type: 'pause' });
    expect(h.rejected(report).message).toContain('awaits no trigger');
  });

  it('an error reported with exit 0 still blocks the run; the telemetry counts either way', () => {
    const h = new Harness();
    h.start(TRIGGERED);
    h.finish({ action: 'trigger', triggerAgentId: 'helper' });
    const before = h.step('plan').telemetry.tokensIn;
    const { events } = h.ok({
      type: 'triggerFinished',
      stepId: 'plan',
      attempt: 1,
      exitCode: 0,
      error: 'no answer',
      telemetry: T1,
    });
    expect(events[0]).toMatchObject({ type: 'triggerFinished', error: 'no answer', exitCode: 0 });
    expect(h.run.blocked).toEqual({
      kind: 'failure',
      reason: 'trigger agent helper of step plan failed: no answer',
    });
    expect(h.step('plan').telemetry.tokensIn).toBe(before + T1.tokensIn);
  });

  it('a trigger that succeeds records no error', () => {
    const h = new Harness();
    h.start(TRIGGERED);
    h.finish({ action: 'trigger', triggerAgentId: 'helper' });
    const { events } = h.ok({ type: 'triggerFinished', stepId: 'plan', attempt: 1, exitCode: 0 });
    expect(events[0]).not.toHaveProperty('error');
    expect(h.current).toBe('build');
  });

  it('a trigger report with bad telemetry is refused', () => {
    const h = new Harness();
    h.start(TRIGGERED);
    h.finish({ action: 'trigger', triggerAgentId: 'helper' });
    expect(
      h.rejected({
        type: 'triggerFinished',
        stepId: 'plan',
        attempt: 1,
        exitCode: 0,
        telemetry: { ...T1, costUsd: -2 },
      }).code,
    ).toBe('INVALID_INPUT');
  });
});

describe('recoverInterrupted, more', () => {
  it('a queued step counts as in flight; a paused run has nothing in flight', () => {
    const h = new Harness();
    h.start(DEMO_WORKFLOW);
    expect(h.ok({ type: 'recoverInterrupted' }).types).toEqual(['stepInterrupted', 'stepQueued']);
    h.ok({ type: 'pause' });
    expect(h.rejected({ type: 'recoverInterrupted' }).message).toContain('nothing was interrupted');
  });

  it('a running attempt may fail; a triggered agent in flight is no interrupted step', () => {
    const h = new Harness();
    h.start(DEMO_WORKFLOW);
    h.ok({ type: 'stepStarted', stepId: 'plan', attempt: 1 });
    h.ok({ type: 'stepFailed', stepId: 'plan', attempt: 1, error: 'killed' });
    expect(h.run.blocked?.reason).toBe('step plan failed: killed');
    const t = new Harness();
    t.start(DEMO_WORKFLOW);
    t.finish({ action: 'trigger', triggerAgentId: 'helper' });
    expect(t.rejected({ type: 'recoverInterrupted' }).message).toContain('nothing was interrupted');
  });
});
