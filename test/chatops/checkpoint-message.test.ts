import { describe, expect, it } from 'vitest';
import { plainTextOf } from '../../src/bridges/render-text.ts';
import {
  checkpointButtons,
  parseButtonId,
  renderClosedCheckpoint,
  renderOpenCheckpoint,
  voteResultWords,
} from '../../src/chatops/checkpoint-message.ts';
import { newButtonToken } from '../../src/db/repositories/checkpoint-messages.ts';
import { SYSTEM_ACTOR } from '../../src/engine/model.ts';
import { ALICE, BOB, CAROL, Harness, RUN_ID, wf } from '../engine/harness.ts';

const FOUR_EYES = wf(`id: gated
steps:
  - id: build
    agent: demo
    prompt: build it
  - id: review
    agent: demo
    prompt: review it
    loop:
      backTo: build
      max: 2
    checkpoint:
      when: after
      approvals: 2
      fourEyes: true
      expiresIn: 2h
      onExpiry: reject
`);

function awaitingReview(): Harness {
  const h = new Harness();
  h.start(FOUR_EYES);
  h.finish();
  h.finish({ action: 'continue', reason: 'looks complete' });
  return h;
}

const show = (m: ReturnType<typeof renderOpenCheckpoint>) =>
  [plainTextOf(m.text), ...(m.fields ?? []).map((f) => `${f.label}: ${f.value}`)].join('\n');

describe('checkpoint message', () => {
  it('renders step, output tail, logs, the policy in words and the buttons', () => {
    const h = awaitingReview();
    const cp = h.run.checkpoint!;
    const token = newButtonToken();
    const m = renderOpenCheckpoint(
      {
        runId: RUN_ID,
        checkpoint: cp,
        outputTail: 'line 1\nline 2',
        logs: `https://pb.example.com/runs/${RUN_ID}`,
        agentReason: 'looks complete',
      },
      token,
    );
    const text = show(m);
    expect(text).toContain(`Checkpoint review:1 — run ${RUN_ID}`);
    expect(text).toContain(
      'step review finished: approve to continue\nThe agent says: looks complete',
    );
    expect(text).toContain('Last output of review:\nline 1\nline 2');
    expect(text).toContain('Step: after step review');
    expect(text).toContain(`Diff and log: https://pb.example.com/runs/${RUN_ID}`);
    expect(text).toContain(
      'Policy: needs 2 approvals, not from the requester; expires in 2 h, then rejected',
    );
    expect(text).toMatch(/Expires: \d{4}-\d\d-\d\d \d\d:\d\d UTC/);
    expect(m.buttons?.map((b) => b.label)).toEqual(['Approve', 'Request changes', 'Reject']);
    for (const b of m.buttons ?? []) expect(Buffer.byteLength(b.id)).toBeLessThanOrEqual(64);
  });

  it('offers Request changes only when the checkpoint allows it', () => {
    expect(checkpointButtons('t'.repeat(22), ['approve', 'reject']).map((b) => b.label)).toEqual([
      'Approve',
      'Reject',
    ]);
  });

  it('round-trips button ids and refuses anything else', () => {
    const token = newButtonToken();
    const all = { comment: true, diff: true };
    const ids = checkpointButtons(token, ['approve', 'reject', 'loop'], all).map((b) => b.id);
    expect(ids.map(parseButtonId)).toEqual([
      { token, answer: 'approve' },
      { token, answer: 'approve', comment: true },
      { token, answer: 'loop' },
      { token, answer: 'reject' },
      { token, answer: 'diff' },
    ]);
    // Diff's id is no tool approval's ([oud]) nor session offer's ([cfx]) button.
    expect(ids.at(-1)).toMatch(/\.v$/);
    for (const bad of ['', token, `${token}.x`, `short.a`, `${token}.a.a`, `../${token}.a`]) {
      expect(parseButtonId(bad), bad).toBeUndefined();
    }
  });

  it('shows votes so far, and the decision with who, when and why without buttons', () => {
    const h = awaitingReview();
    h.ok({ type: 'answerCheckpoint', answer: 'approve', actor: BOB });
    const open = h.run.checkpoint!;
    expect(voteResultWords(open)).toBe('approved — 1 of 2 approvals');
    expect(
      show(renderOpenCheckpoint({ runId: RUN_ID, checkpoint: open }, 'x'.repeat(22))),
    ).toContain('Votes: approved by Bob (1 of 2 approvals)');
    h.ok({ type: 'answerCheckpoint', answer: 'approve', actor: CAROL, reason: 'ship it' });
    const done = h.run.checkpoints.at(-1)!;
    expect(voteResultWords(done)).toBe('approved — 2 of 2 approvals; the run moves on');
    const m = renderClosedCheckpoint({
      runId: RUN_ID,
      checkpoint: done,
      logs: 'phasebridge logs r review',
    });
    expect(m.buttons).toEqual([]);
    const text = show(m);
    expect(text).toMatch(
      /✅ Checkpoint review:1 — run .*\nApproved by Bob and Carol at \d{4}-\d\d-\d\d \d\d:\d\d UTC/,
    );
    expect(text).toContain('Reason given: ship it');
  });

  it('tells an expiry from a human decision', () => {
    const h = awaitingReview();
    const cp = h.run.checkpoint!;
    h.advance(3 * 3_600_000);
    h.ok({ type: 'expireCheckpoint', checkpointId: cp.id, actor: SYSTEM_ACTOR });
    const text = show(
      renderClosedCheckpoint({ runId: RUN_ID, checkpoint: h.run.checkpoints.at(-1)! }),
    );
    expect(text).toMatch(
      /⌛ Checkpoint review:1 .*\nExpired at .* UTC, then rejected automatically/,
    );
    expect(ALICE.id).not.toBe(SYSTEM_ACTOR.id);
  });

  it('keeps an expired checkpoint open with its buttons when the policy says keep', () => {
    const h = new Harness();
    h.start(
      wf(`id: keep
steps:
  - id: build
    agent: demo
    prompt: build it
    checkpoint:
      when: after
      expiresIn: 30m
      onExpiry: keep
`),
    );
    h.finish();
    const id = h.run.checkpoint!.id;
    h.advance(31 * 60_000);
    h.ok({ type: 'expireCheckpoint', checkpointId: id, actor: SYSTEM_ACTOR });
    const m = renderOpenCheckpoint(
      { runId: RUN_ID, checkpoint: h.run.checkpoint! },
      'k'.repeat(22),
    );
    const text = show(m);
    expect(text).toMatch(/⌛ Expired at .* UTC; kept open for a human\./);
    expect(text).toContain(
      'Policy: needs 1 approval; expires in 30 min, then kept open for a human',
    );
    expect(text).not.toContain('Expires:');
    expect(m.buttons?.map((b) => b.label)).toEqual(['Approve', 'Request changes', 'Reject']);
  });
});
