import { describe, expect, it } from 'vitest';
import type { Directive } from '../../src/engine/directive.ts';
import { BOB, Harness, RUN_ID, T1, wf } from './harness.ts';

const PLAIN = wf(`
id: plain
steps:
  - { id: plan, agent: planner, prompt: plan it }
  - { id: build, agent: coder, prompt: build it }
  - { id: review, agent: reviewer, prompt: review it, loop: { backTo: build, max: 2 } }
  - { id: ship, agent: shipper, prompt: ship it }
`);

describe('directives', () => {
  it('continue moves to the next step; after the last the run completes', () => {
    const h = new Harness();
    h.start(PLAIN);
    for (const id of ['plan', 'build', 'review']) {
      expect(h.current).toBe(id);
      h.finish();
    }
    const { types } = h.finish();
    expect(types).toEqual(['stepCompleted', 'runCompleted']);
    expect(h.run.status).toBe('completed');
  });

  it('loop goes back to loop.backTo, counts the loop and re-runs the steps in between', () => {
    const h = new Harness();
    h.start(PLAIN);
    h.finish();
    h.ok({ type: 'stepStarted', stepId: 'build', attempt: 1 });
    h.ok({ type: 'sessionInitialized', stepId: 'build', sessionId: 'old', monitoringId: 2 });
    h.finish();
    const { types, effects } = h.finish({ action: 'loop', reason: 'tests fail' });
    expect(types).toEqual(['stepCompleted', 'loopedBack', 'stepQueued']);
    expect(effects).toMatchObject([{ type: 'enqueueStep', stepId: 'build', attempt: 2 }]);
    expect(h.run.loopCounters).toEqual({ review: 1 });
    expect(h.step('build')).toMatchObject({
      status: 'queued',
      attempt: 2,
      tries: 1,
      completedChains: [],
    });
    expect(h.step('build').sessionId).toBeUndefined();
    expect(h.step('review')).toMatchObject({ status: 'pending', attempt: 1 });
    expect(h.step('plan').status).toBe('completed');
    expect(h.step('build').telemetry).toEqual(T1);
  });

  it('at the loop limit opens a loop-limit checkpoint instead; counters never pass max', () => {
    const h = new Harness();
    h.start(PLAIN);
    h.finish();
    for (let i = 0; i < 2; i++) {
      h.finish();
      h.finish({ action: 'loop' });
    }
    expect(h.run.loopCounters).toEqual({ review: 2 });
    h.finish();
    const { types, effects } = h.finish({ action: 'loop' });
    expect(types).toEqual(['stepCompleted', 'checkpointOpened']);
    expect(effects).toEqual([]);
    expect(h.run.loopCounters).toEqual({ review: 2 });
    expect(h.run.status).toBe('awaiting');
    expect(h.run.checkpoint).toMatchObject({
      id: 'review:1',
      when: 'loop-limit',
      answers: ['approve', 'reject'],
    });
    expect(h.run.checkpoint?.reason).toBe(
      'step review reached its loop limit (2) and asks to go back to build again: approve to continue, reject to fail the run',
    );
    h.ok({ type: 'answerCheckpoint', answer: 'approve' });
    expect(h.current).toBe('ship');
  });

  it('a loop from a step without `loop` blocks the run', () => {
    const h = new Harness();
    h.start(PLAIN);
    h.finish({ action: 'loop' });
    expect(h.run.blocked).toEqual({
      kind: 'failure',
      reason: 'step plan asked to loop but declares no loop: retry or skip',
    });
  });

  it('executeOnce steps that completed are passed over when a loop goes back over them', () => {
    const h = new Harness();
    h.start(
      wf(`
id: once
steps:
  - { id: setup, agent: a, prompt: p }
  - { id: scaffold, agent: a, prompt: p, executeOnce: true }
  - { id: code, agent: a, prompt: p }
  - { id: check, agent: a, prompt: p, loop: { backTo: scaffold, max: 1 } }
`),
    );
    h.finish();
    h.finish();
    h.finish();
    h.finish({ action: 'loop' });
    expect(h.current).toBe('code');
    expect(h.step('scaffold')).toMatchObject({ status: 'completed', attempt: 1 });
    expect(h.step('code').attempt).toBe(2);
  });

  it('checkpoint opens a directive checkpoint with the agent reason and waits', () => {
    const h = new Harness();
    h.start(PLAIN);
    h.finish({ action: 'checkpoint', reason: 'Review changes before continuing' });
    expect(h.run.status).toBe('awaiting');
    expect(h.run.checkpoint).toMatchObject({
      id: 'plan:1',
      stepId: 'plan',
      when: 'directive',
      reason: 'Review changes before continuing',
      answers: ['approve', 'reject', 'loop'],
      policy: { approvals: 1, fourEyes: false, onExpiry: 'keep' },
      votes: [],
    });
  });

  it('trigger enqueues the named agent, then continues when it finishes', () => {
    const h = new Harness();
    h.start(PLAIN);
    const { types, effects } = h.finish({
      action: 'trigger',
      triggerAgentId: 'code-reviewer',
      reason: 'check style',
    });
    expect(types).toEqual(['stepCompleted', 'triggerQueued']);
    expect(effects).toEqual([
      {
        type: 'enqueueTrigger',
        runId: RUN_ID,
        stepId: 'plan',
        attempt: 1,
        agent: 'code-reviewer',
        prompt: 'check style',
      },
    ]);
    expect(h.current).toBe('plan');
    expect(
      h.rejected({ type: 'triggerFinished', stepId: 'plan', attempt: 2, exitCode: 0 }).message,
    ).toBe('stale trigger report: awaiting plan attempt 1');
    const done = h.ok({
      type: 'triggerFinished',
      stepId: 'plan',
      attempt: 1,
      exitCode: 0,
      telemetry: T1,
    });
    expect(done.types).toEqual(['triggerFinished', 'stepQueued']);
    expect(h.current).toBe('build');
    expect(h.run.trigger).toBeUndefined();
    expect(h.step('plan').telemetry.tokensIn).toBe(20);
  });

  it('a failed trigger blocks the run; retry queues it again as a new attempt', () => {
    const h = new Harness();
    h.start(PLAIN);
    h.finish({ action: 'trigger', triggerAgentId: 'helper' });
    h.ok({ type: 'triggerFinished', stepId: 'plan', attempt: 1, exitCode: 2 });
    expect(h.run.blocked).toEqual({
      kind: 'failure',
      reason: 'trigger agent helper of step plan failed: agent exited with code 2',
    });
    const { effects } = h.ok({ type: 'retry' });
    expect(effects).toEqual([
      {
        type: 'enqueueTrigger',
        runId: RUN_ID,
        stepId: 'plan',
        attempt: 2,
        agent: 'helper',
        prompt: 'plan it',
      },
    ]);
  });

  it('stop completes the run early with the reason', () => {
    const h = new Harness();
    h.start(PLAIN);
    h.finish({ action: 'stop', reason: 'Task completed successfully' });
    expect(h.run.status).toBe('completed');
    expect(h.run.outcome).toEqual({ reason: 'Task completed successfully' });
    expect(h.step('build').status).toBe('pending');
  });

  it('error fails the run with the reason', () => {
    const h = new Harness();
    h.start(PLAIN);
    h.finish({ action: 'error', reason: 'Something went wrong' });
    expect(h.run.status).toBe('failed');
    expect(h.run.outcome).toEqual({ reason: 'Something went wrong' });
  });

  it('pause blocks the run as paused until resume, which moves on', () => {
    const h = new Harness();
    h.start(PLAIN);
    h.finish({ action: 'pause', reason: 'need a human look' });
    expect(h.run.status).toBe('blocked');
    expect(h.run.blocked).toEqual({ kind: 'paused', reason: 'need a human look' });
    const { types } = h.ok({ type: 'resume' });
    expect(types).toEqual(['runResumed', 'stepQueued']);
    expect(h.current).toBe('build');
  });
});

describe('directives without a reason', () => {
  it('stop, error, pause and checkpoint say which step asked', () => {
    const outcomes: [string, (h: Harness) => unknown][] = [
      ['stop', (h) => h.run.outcome],
      ['error', (h) => h.run.outcome],
      ['pause', (h) => h.run.blocked],
      ['checkpoint', (h) => h.run.checkpoint?.reason],
    ];
    const seen = outcomes.map(([action, what]) => {
      const h = new Harness();
      h.start(PLAIN);
      h.finish({ action } as Directive);
      return what(h);
    });
    expect(seen).toEqual([
      { reason: 'stopped early by step plan' },
      { reason: 'step plan reported an error' },
      { kind: 'paused', reason: 'paused by step plan' },
      'step plan asks for a decision',
    ]);
  });

  it('a loop without a reason records none; at the limit the question quotes the agent’s reason', () => {
    const h = new Harness();
    h.start(PLAIN);
    h.finish();
    h.finish();
    const { events } = h.finish({ action: 'loop' });
    expect(events[1]).toStrictEqual({
      type: 'loopedBack',
      at: events[1]!.at,
      fromStepId: 'review',
      toStepId: 'build',
      counter: 1,
    });
    h.finish();
    h.finish({ action: 'loop', reason: 'flaky' });
    expect(h.log.filter((e) => e.type === 'loopedBack').at(-1)).toMatchObject({ reason: 'flaky' });
    h.finish();
    h.finish({ action: 'loop', reason: 'still red' });
    expect(h.run.checkpoint?.reason).toBe(
      'step review reached its loop limit (2) and asks to go back to build again (still red): approve to continue, reject to fail the run',
    );
  });

  it('an after checkpoint asks to approve the step, a coordinator’s plan to confirm the plan', () => {
    const h = new Harness();
    const gated = wf(`
id: gated
steps:
  - { id: discover, agent: a, prompt: p, checkpoint: { when: after } }
  - { id: plan, agent: a, prompt: p, checkpoint: { when: after } }
  - { id: execute, agent: a, prompt: p }
`);
    h.start(gated, { layout: 'coordinator' });
    h.finish();
    expect(h.run.checkpoint?.reason).toBe('step discover finished: approve to continue');
    h.ok({ type: 'answerCheckpoint', answer: 'approve', actor: BOB });
    h.finish();
    expect(h.run.checkpoint?.reason).toBe(
      'confirm plan: step plan finished; approve to start executing the tasks',
    );
  });

  it('a before gate on the first step offers no Request changes: there is no step to go back to', () => {
    const h = new Harness();
    h.start(wf('id: g\nsteps: [{ id: a, agent: x, prompt: p, checkpoint: { when: before } }]'));
    expect(h.run.checkpoint).toMatchObject({ id: 'a:1', answers: ['approve', 'reject'] });
  });
});
