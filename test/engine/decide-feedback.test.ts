/** Issue 12: Request changes at a before gate, opt-out per checkpoint, guidance as ledger facts. */
import { describe, expect, it } from 'vitest';
import { MAX_FEEDBACK_CHARS } from '../../src/engine/decide-feedback.ts';
import { feedbackFor } from '../../src/engine/model.ts';
import { noteDestinations } from '../../src/engine/note-destination.ts';
import { runWords } from '../../src/engine/run-words.ts';
import { BOB, CAROL, Harness, wf } from './harness.ts';

const GATED_BUILD = wf(`
id: gated-build
steps:
  - id: plan
    agent: planner
    prompt: plan it
  - id: build
    agent: coder
    prompt: build it
    checkpoint: { when: before }
  - id: ship
    agent: shipper
    prompt: ship it
    checkpoint: { when: after, requestChanges: false }
`);

describe('feedback', () => {
  it('Request changes at a before gate sends the run back to the step before, with the reason', () => {
    const h = new Harness();
    h.start(GATED_BUILD);
    h.finish();
    expect(h.run.checkpoint).toMatchObject({ id: 'build:1', when: 'before' });
    expect(h.run.checkpoint?.answers).toContain('loop');
    h.ok({ type: 'requestChanges', actor: BOB, reason: 'the plan misses the migration' });
    expect(h.current).toBe('plan');
    expect(h.run.loopCounters).toEqual({ build: 1 });
    const plan = h.step('plan');
    expect(feedbackFor(h.run, 'plan', plan.attempt).map((f) => f.text)).toEqual([
      'the plan misses the migration',
    ]);
    // The gate opens again once plan is done.
    h.finish();
    expect(h.run.checkpoint?.id).toBe('build:2');
  });

  it('an approval reason at a before gate is feedback for the gated step; a checkpoint can turn changes off', () => {
    const h = new Harness();
    h.start(GATED_BUILD);
    h.finish();
    h.ok({ type: 'answerCheckpoint', answer: 'approve', actor: BOB, reason: 'keep it small' });
    expect(h.current).toBe('build');
    const build = h.step('build');
    expect(feedbackFor(h.run, 'build', build.attempt)).toMatchObject([
      { kind: 'approval', by: BOB, text: 'keep it small', checkpointId: 'build:1' },
    ]);
    h.finish();
    h.finish();
    expect(h.run.checkpoint).toMatchObject({ id: 'ship:1', answers: ['approve', 'reject'] });
    expect(h.rejected({ type: 'requestChanges', actor: BOB, reason: 'x' }).message).toBe(
      '"loop" is not an answer to checkpoint ship:1 (allowed: approve, reject)',
    );
  });

  it('Request changes looping back to a completed executeOnce step: its reason goes to the step that runs instead', () => {
    const h = new Harness();
    h.start(
      wf(`
id: once-changes
steps:
  - { id: scaffold, agent: a, prompt: p, executeOnce: true }
  - id: code
    agent: a
    prompt: p
    loop: { backTo: scaffold, max: 2 }
    checkpoint: { when: after }
`),
    );
    h.finish();
    h.finish();
    expect(h.run.checkpoint).toMatchObject({ id: 'code:1', when: 'after' });
    // What chat tells a note's writer names the step that will read it, not the one passed over.
    expect(noteDestinations(h.run).ifChanges).toEqual({ stepId: 'code', attempt: 2 });
    h.ok({ type: 'requestChanges', actor: BOB, reason: 'handle the empty list' });
    // scaffold is passed over: code runs again, and it is told why.
    expect(h.current).toBe('code');
    expect(h.step('scaffold')).toMatchObject({ status: 'completed', attempt: 1 });
    const code = h.step('code');
    expect(code.attempt).toBe(2);
    expect(feedbackFor(h.run, 'code', code.attempt)).toMatchObject([
      { kind: 'changes', by: BOB, text: 'handle the empty list' },
    ]);
  });

  it('guidance is recorded for the current step’s next attempt; blank guidance is refused', () => {
    const h = new Harness();
    h.start(GATED_BUILD);
    expect(h.rejected({ type: 'giveGuidance', actor: CAROL, text: '   ' })).toEqual({
      code: 'INVALID_INPUT',
      message: 'guidance needs some text',
    });
    const { types } = h.ok({ type: 'giveGuidance', actor: CAROL, text: 'mind the cache' });
    expect(types).toEqual(['feedbackRecorded']);
    expect(h.run.feedback).toMatchObject([
      { stepId: 'plan', forAttempt: 2, kind: 'guidance', by: CAROL, text: 'mind the cache' },
    ]);
    // Not for the attempt that already runs; for the next one.
    expect(feedbackFor(h.run, 'plan', 1)).toEqual([]);
    expect(feedbackFor(h.run, 'plan', 2)).toHaveLength(1);
  });
});

const PLAN_BUILD = wf(`
id: plan-build
steps:
  - id: plan
    agent: planner
    prompt: plan it
    checkpoint: { when: after }
  - id: build
    agent: coder
    prompt: build it
  - id: ship
    agent: shipper
    prompt: ship it
`);

describe('notes always reach an attempt (issue 29)', () => {
  it('guidance at an after checkpoint waits for plan, attempt 2 and goes to build with the approval', () => {
    const h = new Harness();
    h.start(PLAN_BUILD);
    h.finish();
    h.ok({ type: 'giveGuidance', actor: CAROL, text: 'use bcrypt' });
    expect(h.run.feedback).toMatchObject([
      { stepId: 'plan', forAttempt: 2, kind: 'guidance', checkpointId: 'plan:1' },
    ]);
    const { types } = h.ok({ type: 'answerCheckpoint', answer: 'approve', actor: BOB });
    expect(types).toContain('feedbackForwarded');
    expect(h.current).toBe('build');
    expect(feedbackFor(h.run, 'build', 1)).toMatchObject([
      { kind: 'guidance', by: CAROL, text: 'use bcrypt', forwardedFrom: { stepId: 'plan' } },
    ]);
    expect(feedbackFor(h.run, 'plan', 2)).toEqual([]);
  });

  it('guidance at a checkpoint goes to the re-run when changes are requested', () => {
    const h = new Harness();
    h.start(PLAN_BUILD);
    h.finish();
    h.ok({ type: 'giveGuidance', actor: CAROL, text: 'use bcrypt' });
    const { types } = h.ok({ type: 'requestChanges', actor: BOB, reason: 'add tests' });
    expect(types).not.toContain('feedbackForwarded');
    expect(h.current).toBe('plan');
    expect(feedbackFor(h.run, 'plan', 2).map((f) => f.text)).toEqual(['use bcrypt', 'add tests']);
  });

  it('guidance while a step runs moves on with the run when the step is not run again', () => {
    const h = new Harness();
    h.start(PLAN_BUILD);
    h.finish();
    h.ok({ type: 'answerCheckpoint', answer: 'approve', actor: BOB });
    h.ok({ type: 'giveGuidance', actor: CAROL, text: 'mind the cache' });
    expect(h.run.feedback?.at(-1)).toMatchObject({ stepId: 'build', forAttempt: 2 });
    h.finish();
    expect(h.current).toBe('ship');
    expect(feedbackFor(h.run, 'ship', 1).map((f) => f.text)).toEqual(['mind the cache']);
  });
});

describe('runWords (issue 29)', () => {
  it('lists every word with its author and where it went, a forwarded note with its first home', () => {
    const h = new Harness();
    h.start(PLAN_BUILD);
    h.finish();
    h.ok({ type: 'giveGuidance', actor: CAROL, text: 'use bcrypt' });
    h.ok({ type: 'answerCheckpoint', answer: 'approve', actor: BOB, reason: 'ship it small' });
    expect(runWords(h.run)).toEqual([
      expect.objectContaining({
        kind: 'guidance',
        by: CAROL,
        text: 'use bcrypt',
        checkpointId: 'plan:1',
        to: { stepId: 'build', attempt: 1 },
        forwardedFrom: { stepId: 'plan', attempt: 2 },
        delivered: true,
      }),
      expect.objectContaining({
        kind: 'approval',
        by: BOB,
        text: 'ship it small',
        to: { stepId: 'build', attempt: 1 },
      }),
    ]);
  });
});

const QUORUM = wf(`
id: quorum
steps:
  - id: plan
    agent: planner
    prompt: plan it
    checkpoint: { when: after, approvals: 2, requestChanges: false }
  - id: build
    agent: coder
    prompt: build it
  - id: ship
    agent: shipper
    prompt: ship it
    checkpoint: { when: after }
`);

describe('what a note says and where it waits', () => {
  it('a note is kept without its surrounding blanks, and only its first 4000 characters', () => {
    const h = new Harness();
    h.start(PLAN_BUILD);
    h.ok({ type: 'giveGuidance', actor: CAROL, text: '  mind the cache \n' });
    h.ok({ type: 'giveGuidance', actor: CAROL, text: `${'x'.repeat(MAX_FEEDBACK_CHARS)}tail` });
    const [short, long] = h.run.feedback!;
    expect(short).toStrictEqual({
      stepId: 'plan',
      forAttempt: 2,
      kind: 'guidance',
      by: CAROL,
      at: h.log.at(-2)!.at,
      text: 'mind the cache',
    });
    expect(long!.text).toBe('x'.repeat(MAX_FEEDBACK_CHARS));
    h.finish();
    h.ok({ type: 'requestChanges', actor: BOB, reason: '  add tests  ' });
    expect(h.run.feedback!.at(-1)).toMatchObject({ kind: 'changes', text: 'add tests' });
  });

  it('each approver’s reason reaches the next step; blank reasons and a reject’s reason do not', () => {
    const h = new Harness();
    h.start(QUORUM);
    h.finish();
    const first = h.ok({ type: 'answerCheckpoint', answer: 'approve', actor: BOB, reason: 'ok' });
    expect(first.types).not.toContain('feedbackRecorded');
    const { types } = h.ok({
      type: 'answerCheckpoint',
      answer: 'approve',
      actor: CAROL,
      reason: ' ',
    });
    // Nothing was waiting at the checkpoint: nothing moves.
    expect(types).not.toContain('feedbackForwarded');
    expect(feedbackFor(h.run, 'build', 1)).toMatchObject([
      { kind: 'approval', by: BOB, text: 'ok', checkpointId: 'plan:1' },
    ]);
    h.finish();
    h.finish();
    h.ok({ type: 'answerCheckpoint', answer: 'reject', actor: BOB, reason: 'too late' });
    expect(h.run.status).toBe('failed');
    expect(h.run.feedback).toHaveLength(1);
  });

  it('an approval that ends the run records no reason: no attempt would read it', () => {
    const h = new Harness();
    h.start(QUORUM);
    h.finish();
    h.ok({ type: 'answerCheckpoint', answer: 'approve', actor: BOB });
    h.ok({ type: 'answerCheckpoint', answer: 'approve', actor: CAROL });
    h.finish();
    h.ok({ type: 'giveGuidance', actor: CAROL, text: 'last words' });
    h.finish();
    const { types } = h.ok({
      type: 'answerCheckpoint',
      answer: 'approve',
      actor: BOB,
      reason: 'ship',
    });
    expect(types).not.toContain('feedbackRecorded');
    expect(h.run.status).toBe('completed');
    expect(h.run.feedback?.map((f) => f.text)).toEqual(['last words']);
  });

  it('guidance at a checkpoint without Request changes waits for the step the approval runs', () => {
    const h = new Harness();
    h.start(QUORUM);
    h.finish();
    h.ok({ type: 'giveGuidance', actor: CAROL, text: 'use bcrypt' });
    expect(h.run.feedback).toMatchObject([
      { stepId: 'build', forAttempt: 1, kind: 'guidance', checkpointId: 'plan:1' },
    ]);
    h.ok({ type: 'answerCheckpoint', answer: 'approve', actor: BOB });
    const { types } = h.ok({ type: 'answerCheckpoint', answer: 'approve', actor: CAROL });
    // Already where the approval goes: not moved again.
    expect(types).not.toContain('feedbackForwarded');
    expect(feedbackFor(h.run, 'build', 1)).toEqual([h.run.feedback![0]]);
    expect(h.run.feedback![0]).not.toHaveProperty('forwardedFrom');
  });

  it('guidance at a before gate waits for the step Request changes would run, and goes with the approval to the gated step', () => {
    const h = new Harness();
    h.start(GATED_BUILD);
    h.finish();
    h.ok({ type: 'giveGuidance', actor: CAROL, text: 'keep the API' });
    expect(h.run.feedback).toMatchObject([
      { stepId: 'plan', forAttempt: 2, kind: 'guidance', checkpointId: 'build:1' },
    ]);
    const { types } = h.ok({ type: 'answerCheckpoint', answer: 'approve', actor: BOB });
    expect(types).toContain('feedbackForwarded');
    expect(feedbackFor(h.run, 'build', 1)).toMatchObject([
      { text: 'keep the API', forwardedFrom: { stepId: 'plan', forAttempt: 2 } },
    ]);
  });

  it('a note kept for a later step that runs again stays with it when an earlier checkpoint is approved', () => {
    const h = new Harness();
    h.start(
      wf(`
id: review-loop
steps:
  - { id: plan, agent: planner, prompt: plan it, checkpoint: { when: after } }
  - { id: build, agent: coder, prompt: build it }
  - { id: review, agent: reviewer, prompt: review it, loop: { backTo: plan, max: 2 } }
`),
    );
    h.finish();
    h.ok({ type: 'answerCheckpoint', answer: 'approve', actor: BOB });
    h.finish();
    h.ok({ type: 'giveGuidance', actor: CAROL, text: 'check the logs' });
    h.finish({ action: 'loop' });
    expect(h.current).toBe('plan');
    h.finish();
    h.ok({ type: 'answerCheckpoint', answer: 'approve', actor: BOB });
    expect(h.current).toBe('build');
    expect(feedbackFor(h.run, 'build', 2)).toEqual([]);
    expect(feedbackFor(h.run, 'review', 2).map((f) => f.text)).toEqual(['check the logs']);
  });

  it('a note the step’s retry already read does not move on to the next step', () => {
    const h = new Harness();
    h.start(
      wf('id: two\nsteps: [{ id: plan, agent: p, prompt: p }, { id: build, agent: b, prompt: b }]'),
    );
    h.ok({ type: 'giveGuidance', actor: CAROL, text: 'smaller steps' });
    h.fail();
    h.ok({ type: 'retry' });
    expect(feedbackFor(h.run, 'plan', 2).map((f) => f.text)).toEqual(['smaller steps']);
    const { types } = h.finish();
    expect(types).not.toContain('feedbackForwarded');
    expect(feedbackFor(h.run, 'build', 1)).toEqual([]);
  });

  it('guidance at a gate the run came back to reaches the gated step’s next attempt', () => {
    const h = new Harness();
    h.start(GATED_BUILD);
    h.finish();
    h.ok({ type: 'answerCheckpoint', answer: 'approve', actor: BOB });
    h.finish();
    h.ok({ type: 'revert', toStepId: 'build', actor: BOB, source: 'command' });
    expect(h.run.checkpoint?.id).toBe('build:2');
    h.ok({ type: 'giveGuidance', actor: CAROL, text: 'second try: keep the API' });
    expect(h.run.feedback?.at(-1)).toMatchObject({ stepId: 'plan', forAttempt: 2 });
    h.ok({ type: 'answerCheckpoint', answer: 'approve', actor: BOB });
    expect(feedbackFor(h.run, 'build', 2).map((f) => f.text)).toContain('second try: keep the API');
  });
});
