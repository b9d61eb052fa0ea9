import { describe, expect, it } from 'vitest';
import { DEMO_WORKFLOW } from '../../src/engine/workflow/builtin.ts';
import { FOUR, TRACKED } from './control-workflows.ts';
import { BOB, Harness, RUN_ID } from './harness.ts';

describe('skip', () => {
  it('marks the current step skipped, cancels its job and moves on', () => {
    const h = new Harness();
    h.start(FOUR);
    h.ok({ type: 'stepStarted', stepId: 'a', attempt: 1 });
    const { types, effects } = h.ok({ type: 'skip', actor: BOB });
    expect(types).toEqual(['stepCancelled', 'stepSkipped', 'stepQueued']);
    expect(effects).toStrictEqual([
      { type: 'cancelStep', runId: RUN_ID, stepId: 'a', attempt: 1 },
      {
        type: 'enqueueStep',
        runId: RUN_ID,
        stepId: 'b',
        attempt: 1,
        agent: 'x',
        prompt: 'p',
        delayMs: 0,
      },
    ]);
    expect(h.step('a').status).toBe('skipped');
    expect(
      h.rejected({
        type: 'stepFinished',
        stepId: 'a',
        attempt: 1,
        exitCode: 0,
        directive: { action: 'continue' },
        telemetry: { tokensIn: 0, tokensOut: 0, cachedTokens: 0, costUsd: 0 },
      }).message,
    ).toBe('stale report for step a: the step is skipped, not queued/running');
  });

  it('refuses a skip aimed at a step that is no longer current (stale button)', () => {
    const h = new Harness();
    h.start(FOUR);
    h.finish();
    expect(h.rejected({ type: 'skip', stepId: 'a' }).message).toBe(
      'step a is not the current step (it is b)',
    );
  });

  it('unblocks a failed run by skipping the failed step', () => {
    const h = new Harness();
    h.start(FOUR);
    h.fail();
    expect(h.ok({ type: 'skip' }).types).toEqual(['runResumed', 'stepSkipped', 'stepQueued']);
    expect(h.run.status).toBe('active');
  });

  it('is refused while a checkpoint waits', () => {
    const h = new Harness();
    h.start(DEMO_WORKFLOW);
    h.finish();
    expect(h.rejected({ type: 'skip' }).message).toBe(
      `run ${RUN_ID} is awaiting checkpoint plan:1: answer it (or cancel) before you skip`,
    );
  });
});

describe('pause and resume', () => {
  it('pause cancels the running attempt; resume runs the step again as a new attempt', () => {
    const h = new Harness();
    h.start(FOUR);
    h.ok({ type: 'stepStarted', stepId: 'a', attempt: 1 });
    h.ok({ type: 'sessionInitialized', stepId: 'a', sessionId: 'sess', monitoringId: 1 });
    const paused = h.ok({ type: 'pause', actor: BOB, reason: 'lunch' });
    expect(paused.types).toEqual(['stepCancelled', 'runBlocked']);
    expect(paused.effects).toEqual([
      { type: 'cancelStep', runId: RUN_ID, stepId: 'a', attempt: 1 },
    ]);
    expect(h.run.blocked).toEqual({ kind: 'paused', reason: 'paused by Bob: lunch' });
    expect(h.rejected({ type: 'pause' }).message).toBe(
      `run ${RUN_ID} is already blocked (paused): paused by Bob: lunch`,
    );
    expect(h.rejected({ type: 'retry' }).message).toBe(`run ${RUN_ID} is paused: use resume`);
    const resumed = h.ok({ type: 'resume' });
    expect(resumed.types).toEqual(['runResumed', 'stepQueued']);
    expect(resumed.effects).toMatchObject([{ type: 'enqueueStep', stepId: 'a', attempt: 2 }]);
    expect(h.step('a').sessionId).toBe('sess');
  });

  it('resume is refused when the run is not paused, and after a failure (retry instead)', () => {
    const h = new Harness();
    h.start(FOUR);
    expect(h.rejected({ type: 'resume' }).message).toBe(`run ${RUN_ID} is active, not paused`);
    h.fail();
    expect(h.rejected({ type: 'resume' }).message).toBe(
      `run ${RUN_ID} is blocked by a failure: use retry or skip`,
    );
  });
});

describe('retry', () => {
  it('runs the failed step again as a new attempt with a fresh retry budget', () => {
    const h = new Harness();
    h.start(FOUR);
    h.fail('oops');
    const { types, effects } = h.ok({ type: 'retry' });
    expect(types).toEqual(['runResumed', 'stepQueued']);
    expect(effects).toMatchObject([{ stepId: 'a', attempt: 2, delayMs: 0 }]);
    expect(h.step('a')).toMatchObject({ status: 'queued', tries: 1 });
    expect(h.step('a').error).toBeUndefined();
  });

  it('is refused when nothing failed', () => {
    const h = new Harness();
    h.start(FOUR);
    expect(h.rejected({ type: 'retry' }).message).toBe(`run ${RUN_ID} is active: nothing to retry`);
  });
});

describe('cancel', () => {
  it('ends the run, cancels in-flight work and withdraws an open checkpoint', () => {
    const h = new Harness();
    h.start(DEMO_WORKFLOW);
    h.finish();
    const { types } = h.ok({ type: 'cancel', actor: BOB, reason: 'wrong spec' });
    expect(types).toEqual(['checkpointWithdrawn', 'runCancelled']);
    expect(h.run.status).toBe('cancelled');
    expect(h.run.outcome).toEqual({ reason: 'cancelled by Bob: wrong spec', by: BOB });
    expect(h.run.checkpoint).toBeNull();
    expect(h.run.checkpoints[0]?.withdrawn?.reason).toBe('run cancelled by Bob');
  });

  it('a terminal run never changes: every command is refused', () => {
    const h = new Harness();
    h.start(FOUR);
    h.ok({ type: 'cancel' });
    for (const type of ['resume', 'retry', 'pause', 'cancel', 'recoverInterrupted'] as const) {
      expect(h.rejected({ type })).toEqual({
        code: 'ILLEGAL_TRANSITION',
        message: `run ${RUN_ID} is cancelled; nothing can change it`,
      });
    }
    expect(
      h.rejected({ type: 'answerCheckpoint', checkpointId: 'plan:1', answer: 'approve' }).message,
    ).toBe(`run ${RUN_ID} is cancelled; nothing can change it`);
  });
});

describe('skip ahead', () => {
  it('marks a later step skipped now; the run passes over it when it gets there', () => {
    const h = new Harness();
    h.start(FOUR);
    const { types, events } = h.ok({ type: 'skip', stepId: 'c', ahead: true, actor: BOB });
    expect(types).toEqual(['stepSkipped']);
    expect(events[0]).toMatchObject({ stepId: 'c', reason: 'skipped ahead by Bob', by: BOB });
    expect(h.step('a').status).toBe('queued');
    h.ok({ type: 'skip', stepId: 'd', ahead: true, reason: 'no deploy today' });
    expect(h.step('d')).toMatchObject({ status: 'skipped' });
    expect(h.log.at(-1)).toMatchObject({ type: 'stepSkipped', reason: 'no deploy today' });
    h.finish();
    h.finish();
    expect(h.run.status).toBe('completed');
    expect(h.step('c').attempt).toBe(0);
  });

  it('skip ahead of the current step is an ordinary skip', () => {
    const h = new Harness();
    h.start(FOUR);
    expect(h.ok({ type: 'skip', stepId: 'a', ahead: true, actor: BOB }).types).toEqual([
      'stepCancelled',
      'stepSkipped',
      'stepQueued',
    ]);
    expect(h.log.at(-2)).toMatchObject({ reason: 'skipped by Bob' });
    expect(h.current).toBe('b');
  });

  it('refuses an unknown step, an earlier one, one already skipped and one outside the track', () => {
    const h = new Harness();
    h.start(TRACKED, { selectedTrack: 'quick' });
    expect(h.rejected({ type: 'skip', stepId: 'zz', ahead: true })).toEqual({
      code: 'NOT_FOUND',
      message: `run ${RUN_ID} has no step zz`,
    });
    expect(h.rejected({ type: 'skip', stepId: 'audit', ahead: true }).message).toBe(
      'step audit cannot be skipped ahead: it is not a later step still to run',
    );
    h.ok({ type: 'skip', stepId: 'ship', ahead: true });
    expect(h.rejected({ type: 'skip', stepId: 'ship', ahead: true }).message).toContain(
      'cannot be skipped ahead',
    );
    h.finish();
    expect(h.rejected({ type: 'skip', stepId: 'plan', ahead: true }).message).toContain(
      'cannot be skipped ahead',
    );
  });
});

describe('what a control command records', () => {
  it('a pause, skip or cancel without a reason names who did it', () => {
    const h = new Harness();
    h.start(FOUR);
    h.ok({ type: 'pause', actor: BOB });
    expect(h.run.blocked).toEqual({ kind: 'paused', reason: 'paused by Bob' });
    h.ok({ type: 'resume' });
    h.ok({ type: 'skip', actor: BOB, reason: 'not needed' });
    expect(h.log.find((e) => e.type === 'stepSkipped')).toMatchObject({ reason: 'not needed' });
    h.ok({ type: 'cancel', actor: BOB });
    expect(h.run.outcome).toEqual({ reason: 'cancelled by Bob', by: BOB });
  });

  it('pause is refused while a checkpoint waits', () => {
    const h = new Harness();
    h.start(DEMO_WORKFLOW);
    h.finish();
    expect(h.rejected({ type: 'pause' }).message).toBe(
      `run ${RUN_ID} is awaiting checkpoint plan:1: answer it (or cancel) before you pause`,
    );
  });

  it('resume of a pause taken while a triggered agent waited queues that agent again', () => {
    const h = new Harness();
    h.start(FOUR);
    h.finish({ action: 'trigger', triggerAgentId: 'reviewer', reason: 'review a' });
    h.ok({ type: 'pause' });
    const { types, effects } = h.ok({ type: 'resume' });
    expect(types).toEqual(['runResumed', 'triggerQueued']);
    expect(effects).toEqual([
      {
        type: 'enqueueTrigger',
        runId: RUN_ID,
        stepId: 'a',
        attempt: 2,
        agent: 'reviewer',
        prompt: 'review a',
      },
    ]);
  });

  it('a start keeps the attached inputs, and resumes interrupted steps unless told not to', () => {
    const h = new Harness();
    const inputs = [{ path: '.phasebridge/runs/x/inputs/a.png', bytes: 3, kind: 'image' as const }];
    h.start(FOUR, { inputs });
    expect(h.run.inputs).toEqual(inputs);
    expect(h.run.resumeFromLastStep).toBe(true);
    expect(h.run).not.toHaveProperty('selectedTrack');
    const bare = new Harness();
    bare.start(FOUR, { inputs: [] });
    expect(bare.run).not.toHaveProperty('inputs');
  });

  it('names the tracks and conditions a workflow has, or none', () => {
    const h = new Harness();
    const start = {
      type: 'start',
      runId: RUN_ID,
      workspace: '/w',
      layout: 'native',
      spec: '',
    } as const;
    expect(h.rejected({ ...start, workflow: FOUR, selectedTrack: 'fast' } as const).message).toBe(
      'unknown track "fast" (workflow four has: none)',
    );
    expect(
      h.rejected({ ...start, workflow: FOUR, selectedConditions: ['docs'] } as const).message,
    ).toBe('unknown condition(s) docs (workflow four has: none)');
  });

  it('a start records no track when none was chosen, and refuses a workflow without steps', () => {
    const h = new Harness();
    h.start(FOUR);
    expect(h.log[0]).not.toHaveProperty('selectedTrack');
    const start = {
      type: 'start',
      runId: RUN_ID,
      workspace: '/w',
      layout: 'native',
      spec: '',
    } as const;
    const empty = { id: 'empty', version: 'v', steps: [], tracks: [] };
    expect(new Harness().rejected({ ...start, workflow: empty })).toEqual({
      code: 'INVALID_INPUT',
      message: 'workflow empty has no steps',
    });
    const noTracks = { ...FOUR, tracks: [] };
    expect(
      new Harness().rejected({ ...start, workflow: noTracks, selectedTrack: 'x' }).message,
    ).toBe('unknown track "x" (workflow four has: none)');
  });
});
