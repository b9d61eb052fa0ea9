import { describe, expect, it } from 'vitest';
import {
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
  it('offers loop only after a step ran, when it declares a loop with room left', () => {
    expect(checkpointAnswers('after', STEP, 1)).toEqual(['approve', 'reject', 'loop']);
    expect(checkpointAnswers('directive', STEP, 2)).toEqual(['approve', 'reject']);
    expect(checkpointAnswers('before', STEP, 0)).toEqual(['approve', 'reject']);
    expect(checkpointAnswers('loop-limit', STEP, 0)).toEqual(['approve', 'reject']);
    expect(checkpointAnswers('after', { ...STEP, loop: undefined }, 0)).toEqual([
      'approve',
      'reject',
    ]);
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
    expect(closedMessage(decided)).toBe('checkpoint review:1 already rejected by cli:zed');
    expect(closedMessage(cp({ withdrawn: { at: 'x', reason: 'run reset by Bob' } }))).toBe(
      'checkpoint review:1 was withdrawn: run reset by Bob',
    );
  });
});
