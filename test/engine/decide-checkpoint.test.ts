import { describe, expect, it } from 'vitest';
import { feedbackFor, SYSTEM_ACTOR } from '../../src/engine/model.ts';
import { DEMO_WORKFLOW } from '../../src/engine/workflow/builtin.ts';
import { ALICE, BOB, CAROL, Harness, RUN_ID, wf } from './harness.ts';

const GATED = wf(`
id: gated
steps:
  - id: build
    agent: coder
    prompt: build it
  - id: review
    agent: reviewer
    prompt: review it
    loop: { backTo: build, max: 1 }
    checkpoint: { when: after, approvals: 2, fourEyes: true }
  - id: deploy
    agent: deployer
    prompt: deploy it
    checkpoint: { when: before, expiresIn: 1h, onExpiry: reject }
`);

/** A run of GATED at review's after-checkpoint. */
function atReview(): Harness {
  const h = new Harness();
  h.start(GATED);
  h.finish();
  h.finish();
  return h;
}

describe('answerCheckpoint', () => {
  it('needs N distinct approvers; the checkpoint resolves with all of them', () => {
    const h = atReview();
    expect(h.run.checkpoint).toMatchObject({
      id: 'review:1',
      when: 'after',
      answers: ['approve', 'reject', 'loop'],
    });
    const first = h.ok({ type: 'answerCheckpoint', answer: 'approve', actor: BOB });
    expect(first.types).toEqual(['checkpointVoted']);
    expect(h.run.status).toBe('awaiting');
    const second = h.ok({
      type: 'answerCheckpoint',
      answer: 'approve',
      actor: CAROL,
      reason: 'lgtm',
    });
    expect(second.types).toEqual([
      'checkpointVoted',
      'checkpointResolved',
      'feedbackRecorded',
      'checkpointOpened',
    ]);
    // The approval's reason is feedback for the step that runs next.
    expect(h.run.feedback).toEqual([
      {
        stepId: h.run.steps[h.run.cursor]!.id,
        forAttempt: h.run.steps[h.run.cursor]!.attempt + 1,
        kind: 'approval',
        by: CAROL,
        at: '2026-11-29T14:30:06.000Z',
        text: 'lgtm',
        checkpointId: 'review:1',
      },
    ]);
    const resolved = h.run.checkpoints[0]!;
    expect(resolved.decision).toEqual({
      answer: 'approve',
      by: [BOB, CAROL],
      at: '2026-11-29T14:30:06.000Z',
      reason: 'lgtm',
    });
    expect(resolved.votes.map((v) => v.actor.id)).toEqual([BOB.id, CAROL.id]);
  });

  it('four-eyes: the run starter cannot approve, and the rejection says why', () => {
    const h = atReview();
    expect(h.rejected({ type: 'answerCheckpoint', answer: 'approve', actor: ALICE })).toEqual({
      code: 'UNAUTHORIZED',
      message:
        'four-eyes rule: Alice started this run and cannot approve checkpoint review:1; another approver must',
    });
  });

  it('nobody votes twice', () => {
    const h = atReview();
    h.ok({ type: 'answerCheckpoint', answer: 'approve', actor: BOB });
    expect(h.rejected({ type: 'answerCheckpoint', answer: 'approve', actor: BOB }).message).toBe(
      'Bob already voted on checkpoint review:1',
    );
  });

  it('a single reject resolves it and fails the run with "rejected by X: reason"', () => {
    const h = atReview();
    h.ok({ type: 'answerCheckpoint', answer: 'approve', actor: BOB });
    const { types } = h.ok({
      type: 'answerCheckpoint',
      answer: 'reject',
      actor: ALICE,
      reason: 'wrong approach',
    });
    expect(types).toEqual(['checkpointVoted', 'checkpointResolved', 'runFailed']);
    expect(h.run.status).toBe('failed');
    expect(h.run.outcome).toEqual({ reason: 'rejected by Alice: wrong approach', by: ALICE });
  });

  it('request changes needs a reason, goes back with it as feedback, and is refused at the max', () => {
    const h = atReview();
    expect(h.rejected({ type: 'requestChanges', actor: BOB, reason: '  ' })).toEqual({
      code: 'INVALID_INPUT',
      message: 'a change request needs a reason: say what to change at review:1',
    });
    expect(h.rejected({ type: 'answerCheckpoint', answer: 'loop', actor: BOB }).code).toBe(
      'INVALID_INPUT',
    );
    const { types } = h.ok({ type: 'requestChanges', actor: BOB, reason: 'needs tests' });
    expect(types).toEqual([
      'checkpointVoted',
      'checkpointResolved',
      'feedbackRecorded',
      'loopedBack',
      'stepQueued',
    ]);
    expect(h.run.loopCounters).toEqual({ review: 1 });
    expect(h.current).toBe('build');
    const build = h.run.steps.find((s) => s.id === 'build')!;
    expect(h.run.feedback).toEqual([
      {
        stepId: 'build',
        forAttempt: build.attempt,
        kind: 'changes',
        by: BOB,
        at: expect.any(String),
        text: 'needs tests',
        checkpointId: 'review:1',
      },
    ]);
    expect(feedbackFor(h.run, 'build', build.attempt).map((f) => f.text)).toEqual(['needs tests']);
    h.finish();
    h.finish();
    expect(h.run.checkpoint?.id).toBe('review:2');
    // Still offered, so the refusal can say why: the step's loop max (1) is used up.
    expect(h.run.checkpoint?.answers).toContain('loop');
    expect(h.rejected({ type: 'requestChanges', actor: BOB, reason: 'once more' }).message).toBe(
      'step review already went back 1 time, its limit (loop max 1): approve or reject checkpoint review:2',
    );
    expect(h.run.feedback).toHaveLength(1);
  });

  it('a resolved checkpoint is never resolved again', () => {
    const h = atReview();
    h.ok({ type: 'answerCheckpoint', answer: 'approve', actor: BOB });
    h.ok({ type: 'answerCheckpoint', answer: 'approve', actor: CAROL });
    const r = h.rejected({
      type: 'answerCheckpoint',
      checkpointId: 'review:1',
      answer: 'reject',
      actor: ALICE,
    });
    expect(r).toEqual({
      code: 'ILLEGAL_TRANSITION',
      message: 'checkpoint review:1 already approved by Bob, Carol',
    });
  });

  it('refuses an unknown checkpoint id and an answer when none is open', () => {
    const h = new Harness();
    h.start(DEMO_WORKFLOW);
    expect(
      h.rejected({ type: 'answerCheckpoint', checkpointId: 'plan:9', answer: 'approve' }),
    ).toEqual({
      code: 'NOT_FOUND',
      message: `run ${RUN_ID} has no checkpoint plan:9`,
    });
    expect(h.rejected({ type: 'answerCheckpoint', answer: 'approve' }).message).toBe(
      `run ${RUN_ID} has no open checkpoint (it is active)`,
    );
  });

  it('a before gate opens when the step is reached; approval queues the step', () => {
    const h = atReview();
    h.ok({ type: 'answerCheckpoint', answer: 'approve', actor: BOB });
    h.ok({ type: 'answerCheckpoint', answer: 'approve', actor: CAROL });
    expect(h.current).toBe('deploy');
    expect(h.step('deploy').status).toBe('pending');
    expect(h.run.checkpoint).toMatchObject({
      id: 'deploy:1',
      when: 'before',
      reason: 'approve to start step deploy',
    });
    const { types, effects } = h.ok({ type: 'answerCheckpoint', answer: 'approve', actor: ALICE });
    expect(types).toEqual(['checkpointVoted', 'checkpointResolved', 'stepQueued']);
    expect(effects).toMatchObject([{ type: 'enqueueStep', stepId: 'deploy', attempt: 1 }]);
    expect(h.step('deploy').gatePassed).toBe(true);
  });
});

describe('expireCheckpoint', () => {
  /** A run of GATED waiting at deploy's before gate (expires in 1h, onExpiry reject). */
  function atDeployGate(): { h: Harness; opened: ReturnType<Harness['ok']> } {
    const h = atReview();
    h.ok({ type: 'answerCheckpoint', answer: 'approve', actor: BOB });
    const opened = h.ok({ type: 'answerCheckpoint', answer: 'approve', actor: CAROL });
    return { h, opened };
  }

  it('opening a checkpoint with expiresIn schedules its expiry', () => {
    const { h, opened } = atDeployGate();
    const expiresAt = '2026-11-29T15:30:06.000Z';
    expect(h.run.checkpoint?.expiresAt).toBe(expiresAt);
    expect(opened.effects).toEqual([
      { type: 'scheduleExpiry', runId: RUN_ID, checkpointId: 'deploy:1', at: expiresAt },
    ]);
  });

  it('refuses to expire early, then applies onExpiry reject', () => {
    const { h } = atDeployGate();
    expect(
      h.rejected({ type: 'expireCheckpoint', checkpointId: 'deploy:1', actor: SYSTEM_ACTOR })
        .message,
    ).toBe('checkpoint deploy:1 does not expire before 2026-11-29T15:30:06.000Z');
    h.advance(3_600_000);
    const { types } = h.ok({
      type: 'expireCheckpoint',
      checkpointId: 'deploy:1',
      actor: SYSTEM_ACTOR,
    });
    expect(types).toEqual(['checkpointResolved', 'runFailed']);
    expect(h.run.outcome?.reason).toBe('rejected by system: expired after 3600000 ms');
    expect(h.run.checkpoints.at(-1)?.decision?.answer).toBe('reject');
  });

  it('onExpiry approve moves on in the system name', () => {
    const h = new Harness();
    h.start(
      wf(
        'id: e\nsteps: [{ id: s, agent: a, prompt: p, checkpoint: { when: after, expiresIn: 5m, onExpiry: approve } }]',
      ),
    );
    h.finish();
    h.advance(300_000);
    h.ok({ type: 'expireCheckpoint', checkpointId: 's:1', actor: SYSTEM_ACTOR });
    expect(h.run.status).toBe('completed');
    expect(h.run.checkpoints[0]?.decision).toMatchObject({ answer: 'approve', by: [SYSTEM_ACTOR] });
  });

  it('onExpiry keep marks it expired and leaves it open for a human', () => {
    const h = new Harness();
    h.start(
      wf(
        'id: e\nsteps: [{ id: s, agent: a, prompt: p, checkpoint: { when: after, expiresIn: 30s, onExpiry: keep } }]',
      ),
    );
    h.finish();
    h.advance(30_000);
    expect(
      h.ok({ type: 'expireCheckpoint', checkpointId: 's:1', actor: SYSTEM_ACTOR }).types,
    ).toEqual(['checkpointExpired']);
    expect(h.run.status).toBe('awaiting');
    expect(h.run.checkpoint?.expiredAt).toBeDefined();
    expect(
      h.rejected({ type: 'expireCheckpoint', checkpointId: 's:1', actor: SYSTEM_ACTOR }).message,
    ).toBe('checkpoint s:1 already expired and is kept open');
    h.ok({ type: 'answerCheckpoint', answer: 'approve', actor: BOB });
    expect(h.run.status).toBe('completed');
  });

  it('a late timer for an already decided checkpoint is refused', () => {
    const { h } = atDeployGate();
    h.ok({ type: 'answerCheckpoint', answer: 'approve', actor: BOB });
    h.advance(7_200_000);
    expect(
      h.rejected({ type: 'expireCheckpoint', checkpointId: 'deploy:1', actor: SYSTEM_ACTOR })
        .message,
    ).toBe('checkpoint deploy:1 already approved by Bob');
  });
});

describe('reopenCheckpoint', () => {
  const KEEP = wf(
    'id: e\nsteps: [{ id: s, agent: a, prompt: p, checkpoint: { when: after, expiresIn: 30s, onExpiry: keep } }]',
  );

  it('re-opens an expired checkpoint as a new one with a fresh expiry; the old one is withdrawn', () => {
    const h = new Harness();
    h.start(KEEP);
    h.finish();
    h.advance(30_000);
    h.ok({ type: 'expireCheckpoint', checkpointId: 's:1', actor: SYSTEM_ACTOR });
    h.advance(60_000);
    const reopened = h.ok({ type: 'reopenCheckpoint', checkpointId: 's:1', actor: BOB });
    expect(reopened.types).toEqual(['checkpointWithdrawn', 'checkpointOpened']);
    expect(h.run.checkpoints.at(-1)).toMatchObject({
      id: 's:1',
      withdrawn: { reason: expect.stringMatching(/^expired; re-opened by /) },
    });
    const fresh = h.run.checkpoint!;
    expect(fresh).toMatchObject({ id: 's:2', stepId: 's', votes: [] });
    expect(fresh.expiredAt).toBeUndefined();
    expect(Date.parse(fresh.expiresAt!) - Date.parse(fresh.openedAt)).toBe(30_000);
    expect(reopened.effects).toEqual([
      { type: 'scheduleExpiry', runId: RUN_ID, checkpointId: 's:2', at: fresh.expiresAt },
    ]);
    expect(h.run.status).toBe('awaiting');
    h.ok({ type: 'answerCheckpoint', answer: 'approve', actor: BOB });
    expect(h.run.status).toBe('completed');
  });

  it('refuses a checkpoint that has not expired, and a run that has none open', () => {
    const h = new Harness();
    h.start(KEEP);
    h.finish();
    expect(h.rejected({ type: 'reopenCheckpoint', actor: BOB }).message).toBe(
      'checkpoint s:1 has not expired: answer it instead',
    );
    h.ok({ type: 'answerCheckpoint', answer: 'approve', actor: BOB });
    expect(h.rejected({ type: 'reopenCheckpoint', actor: BOB }).message).toMatch(/is completed/);
  });
});
