import { describe, expect, it } from 'vitest';
import {
  changesRefusal,
  checkpointAnswers,
  closedMessage,
  evaluateVote,
  policyFor,
} from '../../src/engine/checkpoint-policy.ts';
import type { CheckpointState } from '../../src/engine/model.ts';
import { ALICE, BOB, CAROL } from './harness.ts';

const STEP = { id: 'review', agent: 'a', prompt: 'p', loop: { backTo: 'build', max: 2 } };

function cp(extra: Partial<CheckpointState> = {}): CheckpointState {
  return {
    id: 'review:1',
    stepId: 'review',
    when: 'after',
    reason: 'r',
    answers: ['approve', 'reject', 'loop'],
    policy: { approvals: 2, fourEyes: true, onExpiry: 'keep' },
    openedAt: '2026-01-01T00:00:00.000Z',
    votes: [],
    ...extra,
  };
}

describe('checkpoint policy', () => {
  it('offers Request changes after a step ran, at a before gate with an earlier step, unless turned off', () => {
    const all = ['approve', 'reject', 'loop'];
    expect(checkpointAnswers('after', STEP, true)).toEqual(all);
    expect(checkpointAnswers('directive', STEP, true)).toEqual(all);
    expect(checkpointAnswers('after', { ...STEP, loop: undefined }, true)).toEqual(all);
    expect(checkpointAnswers('before', STEP, true)).toEqual(all);
    expect(checkpointAnswers('before', STEP, false)).toEqual(['approve', 'reject']);
    expect(checkpointAnswers('loop-limit', STEP, true)).toEqual(['approve', 'reject']);
    expect(checkpointAnswers('after', STEP, true, true)).toEqual(all);
    expect(checkpointAnswers('after', { ...STEP, loop: undefined }, true, true)).toEqual([
      'approve',
      'reject',
    ]);
    const off = {
      ...STEP,
      checkpoint: {
        when: 'after' as const,
        approvals: 1,
        fourEyes: false,
        onExpiry: 'keep' as const,
        requestChanges: false,
      },
    };
    expect(checkpointAnswers('after', off, true)).toEqual(['approve', 'reject']);
  });

  it('defaults to one approver, no four-eyes, no expiry', () => {
    expect(policyFor(undefined)).toEqual({ approvals: 1, fourEyes: false, onExpiry: 'keep' });
  });

  it('counts distinct approvers and resolves at the threshold', () => {
    expect(evaluateVote(cp(), ALICE, BOB, 'approve')).toEqual({ ok: true, resolves: false });
    const withBob = cp({ votes: [{ actor: BOB, answer: 'approve', at: 'x' }] });
    expect(evaluateVote(withBob, ALICE, CAROL, 'approve')).toEqual({
      ok: true,
      resolves: true,
      answer: 'approve',
      by: [BOB, CAROL],
    });
  });

  it('the starter may still reject or loop under four-eyes', () => {
    expect(evaluateVote(cp(), ALICE, ALICE, 'reject')).toMatchObject({ ok: true, resolves: true });
    expect(evaluateVote(cp(), ALICE, ALICE, 'approve')).toMatchObject({
      ok: false,
      rejection: { code: 'UNAUTHORIZED' },
    });
  });

  it('names who decided a closed checkpoint', () => {
    const decided = cp({ decision: { answer: 'reject', by: [{ id: 'cli:zed' }], at: 'x' } });
    expect(closedMessage(decided)).toBe('checkpoint review:1 already rejected by zed');
    expect(closedMessage(cp({ withdrawn: { at: 'x', reason: 'run reset by Bob' } }))).toBe(
      'checkpoint review:1 was withdrawn: run reset by Bob',
    );
  });

  it('an expired checkpoint nobody decided names no one; one with no record still answers', () => {
    const expired = cp({ decision: { answer: 'expired-keep', by: [], at: 'x' } });
    expect(closedMessage(expired)).toBe('checkpoint review:1 already expired');
    expect(closedMessage(cp())).toBe('checkpoint review:1 was withdrawn: closed');
  });

  it('refuses an answer the checkpoint does not offer, or a second vote, as an illegal transition', () => {
    const gate = cp({ answers: ['approve', 'reject'] });
    expect(evaluateVote(gate, ALICE, BOB, 'loop')).toEqual({
      ok: false,
      rejection: {
        code: 'ILLEGAL_TRANSITION',
        message: '"loop" is not an answer to checkpoint review:1 (allowed: approve, reject)',
      },
    });
    const voted = cp({ votes: [{ actor: BOB, answer: 'approve', at: 'x' }] });
    expect(evaluateVote(voted, ALICE, BOB, 'approve')).toMatchObject({
      ok: false,
      rejection: {
        code: 'ILLEGAL_TRANSITION',
        message: 'Bob already voted on checkpoint review:1',
      },
    });
  });

  it('counts a person, not an identity: linked identities vote once and the starter stays out', () => {
    // Bob on Slack, linked to Bob on Telegram (issue 36).
    const bobOnSlack = { id: 'slack:U2', name: 'Bob', sameAs: [BOB.id] };
    const voted = cp({ votes: [{ actor: BOB, answer: 'approve', at: 'x' }] });
    expect(evaluateVote(voted, ALICE, bobOnSlack, 'approve')).toMatchObject({
      ok: false,
      rejection: { message: 'Bob already voted on checkpoint review:1' },
    });
    // Alice started the run on Telegram; on Slack she is still its starter under four-eyes.
    const aliceOnSlack = { id: 'slack:U1', name: 'Alice', sameAs: [ALICE.id] };
    expect(evaluateVote(cp(), ALICE, aliceOnSlack, 'approve')).toMatchObject({
      ok: false,
      rejection: { code: 'UNAUTHORIZED' },
    });
    // Unlinked, the Slack account is someone else.
    const { sameAs: _, ...plain } = aliceOnSlack;
    expect(evaluateVote(cp(), ALICE, plain, 'approve')).toEqual({ ok: true, resolves: false });
  });

  it('allows Request changes until the step went back loop.max times, then says how often', () => {
    expect(changesRefusal(STEP, 1, 'review:2')).toBeNull();
    expect(changesRefusal(STEP, 2, 'review:3')).toBe(
      'step review already went back 2 times, its limit (loop max 2): approve or reject checkpoint review:3',
    );
    const once = { ...STEP, loop: { backTo: 'build', max: 1 } };
    expect(changesRefusal(once, 1, 'review:2')).toBe(
      'step review already went back 1 time, its limit (loop max 1): approve or reject checkpoint review:2',
    );
  });
});
