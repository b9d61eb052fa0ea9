import { describe, expect, it } from 'vitest';
import { DEMO_WORKFLOW } from '../../src/engine/workflow/builtin.ts';
import { FOUR, TRACKED } from './control-workflows.ts';
import { BOB, Harness } from './harness.ts';

describe('revert and reset', () => {
  /** FOUR run with a, b done, c running after one loop. */
  function midway(): Harness {
    const h = new Harness();
    h.start(FOUR);
    h.finish();
    h.finish();
    h.finish({ action: 'loop' });
    h.finish();
    h.ok({ type: 'stepStarted', stepId: 'c', attempt: 2 });
    return h;
  }

  it('revert goes back: the target and later steps run again, their loop counters cleared', () => {
    const h = midway();
    const { types, effects, events } = h.ok({
      type: 'revert',
      toStepId: 'b',
      source: 'file-edit',
      actor: BOB,
    });
    expect(types).toEqual(['stepCancelled', 'reverted', 'stepQueued']);
    expect(events[1]).toMatchObject({
      type: 'reverted',
      toStepId: 'b',
      source: 'file-edit',
      by: BOB,
    });
    expect(effects).toMatchObject([
      { type: 'cancelStep', stepId: 'c', attempt: 2 },
      { type: 'enqueueStep', stepId: 'b', attempt: 3 },
    ]);
    expect(h.run.loopCounters).toEqual({});
    expect(h.step('a').status).toBe('completed');
    expect(h.step('c')).toMatchObject({ status: 'pending', attempt: 2 });
  });

  it('revert refuses a step after the current one, and an unknown step', () => {
    const h = midway();
    expect(h.rejected({ type: 'revert', toStepId: 'd', source: 'command' }).message).toBe(
      'revert goes back only: step d comes after the current step c',
    );
    expect(h.rejected({ type: 'revert', toStepId: 'zz', source: 'command' }).code).toBe(
      'NOT_FOUND',
    );
  });

  it('revert unblocks a blocked run', () => {
    const h = new Harness();
    h.start(FOUR);
    h.finish();
    h.fail();
    expect(h.ok({ type: 'revert', toStepId: 'a', source: 'command' }).types).toEqual([
      'reverted',
      'runResumed',
      'stepQueued',
    ]);
    expect(h.run.status).toBe('active');
  });

  it('reset starts over from the first step with all counters at zero', () => {
    const h = midway();
    const { types, effects } = h.ok({ type: 'reset', source: 'file-edit' });
    expect(types).toEqual(['stepCancelled', 'runReset', 'stepQueued']);
    expect(effects).toMatchObject([
      { type: 'cancelStep' },
      { type: 'enqueueStep', stepId: 'a', attempt: 2 },
    ]);
    expect(h.run.loopCounters).toEqual({});
    expect(h.run.steps.map((s) => s.status)).toEqual(['queued', 'pending', 'pending', 'pending']);
  });

  it('reset while awaiting withdraws the checkpoint', () => {
    const h = new Harness();
    h.start(DEMO_WORKFLOW);
    h.finish();
    expect(h.ok({ type: 'reset', source: 'command' }).types).toEqual([
      'checkpointWithdrawn',
      'runReset',
      'stepQueued',
    ]);
    expect(h.run.status).toBe('active');
  });

  it('revert refuses a step outside the selected track', () => {
    const h = new Harness();
    h.start(TRACKED, { selectedTrack: 'quick' });
    h.finish();
    expect(h.rejected({ type: 'revert', toStepId: 'audit', source: 'command' })).toEqual({
      code: 'INVALID_INPUT',
      message: 'step audit is not in the selected track/conditions',
    });
  });

  it('reset unblocks a failed run; revert may go back to the current step', () => {
    const h = new Harness();
    h.start(FOUR);
    h.fail();
    expect(h.ok({ type: 'reset', source: 'command' }).types).toEqual([
      'runReset',
      'runResumed',
      'stepQueued',
    ]);
    expect(h.run.status).toBe('active');
    h.finish();
    const { types } = h.ok({ type: 'revert', toStepId: 'b', source: 'command' });
    expect(types).toEqual(['stepCancelled', 'reverted', 'stepQueued']);
    expect(h.step('b').attempt).toBe(2);
  });
});
