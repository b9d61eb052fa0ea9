/**
 * Issue 36 in the pure engine: a checkpoint's content digest is recorded by a command from the
 * edge; an answer computed against other content is refused; a replaced digest clears the votes
 * given for the old content; the decision carries the digest it was given for.
 */
import { describe, expect, it } from 'vitest';
import { BOB, CAROL, Harness, wf } from './harness.ts';

const TWO = wf(`
id: two
steps:
  - id: plan
    agent: planner
    prompt: plan it
    artifacts: [plan.md]
    checkpoint: { when: after, approvals: 2 }
`);

const A = 'a'.repeat(64);
const B = 'b'.repeat(64);
const SYSTEM = { id: 'system', name: 'phasebridge' };

function atPlan(): Harness {
  const h = new Harness();
  h.start(TWO);
  h.finish();
  return h;
}

const record = (digest: string, change?: string) => ({
  type: 'recordCheckpointDigest' as const,
  checkpointId: 'plan:1',
  digest,
  label: `plan.md, ${digest.slice(0, 6)}`,
  actor: SYSTEM,
  ...(change !== undefined ? { change } : {}),
});

describe('checkpoint content digests', () => {
  it('keeps the artifacts a workflow step declares', () => {
    expect(TWO.steps[0]!.artifacts).toEqual(['plan.md']);
  });

  it('records the first digest without touching the votes', () => {
    const h = atPlan();
    expect(h.ok(record(A)).events).toEqual([
      expect.objectContaining({ type: 'checkpointDigestRecorded', digest: A }),
    ]);
    expect(h.run.checkpoint).toMatchObject({ digest: A, digestLabel: 'plan.md, aaaaaa' });
    expect(h.run.checkpoint!.contentChanged).toBeUndefined();
    expect(h.rejected(record(A)).message).toMatch(/already has digest/);
    expect(h.rejected({ ...record(A), digest: 'xyz' }).code).toBe('INVALID_INPUT');
  });

  it('refuses an answer computed against other content, and accepts the matching one', () => {
    const h = atPlan();
    h.ok(record(A));
    const refusal = h.rejected({
      type: 'answerCheckpoint',
      answer: 'approve',
      actor: BOB,
      digest: B,
    });
    expect(refusal.message).toMatch(/changed after it was shown \(now plan\.md, aaaaaa\)/);
    expect(h.run.checkpoint!.votes).toEqual([]);
    h.ok({ type: 'answerCheckpoint', answer: 'approve', actor: BOB, digest: A });
    expect(h.run.checkpoint!.votes[0]!.digest).toBe(A);
  });

  it('a replaced digest clears the votes given for the old content; the decision carries the new one', () => {
    const h = atPlan();
    h.ok(record(A));
    h.ok({ type: 'answerCheckpoint', answer: 'approve', actor: BOB, digest: A });
    const replaced = h.ok(record(B, 'plan.md changed'));
    expect(replaced.events[0]).toMatchObject({ previous: A, change: 'plan.md changed' });
    expect(h.run.checkpoint).toMatchObject({
      digest: B,
      votes: [],
      contentChanged: 'plan.md changed',
    });
    // Bob's approval was of the old plan: two approvals of the new one are needed.
    h.ok({ type: 'answerCheckpoint', answer: 'approve', actor: BOB, digest: B });
    expect(h.run.status).toBe('awaiting');
    h.ok({ type: 'answerCheckpoint', answer: 'approve', actor: CAROL, digest: B });
    expect(h.run.checkpoints[0]!.decision).toMatchObject({ answer: 'approve', digest: B });
  });
});
