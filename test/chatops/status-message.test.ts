import { describe, expect, it } from 'vitest';
import { plainTextOf } from '../../src/bridges/render-text.ts';
import { outcomeMessage, renderStatus } from '../../src/chatops/status-message.ts';
import { DEMO_WORKFLOW } from '../../src/engine/workflow/builtin.ts';
import { ALICE, BASE_TIME, Harness, RUN_ID } from '../engine/harness.ts';

const body = (m: ReturnType<typeof renderStatus>) =>
  `${plainTextOf(m.text)}\n${(m.fields ?? []).map((f) => `${f.label}: ${f.value}`).join('\n')}`;

describe('renderStatus', () => {
  it('lists steps with marks, elapsed times, progress, tokens and cost', () => {
    const h = new Harness();
    h.start(DEMO_WORKFLOW);
    h.finish(); // plan: 1 s, opens its checkpoint
    h.ok({ type: 'answerCheckpoint', answer: 'approve', actor: ALICE });
    h.ok({ type: 'stepStarted', stepId: 'build', attempt: 1 });
    const now = BASE_TIME + 64_000;
    const text = body(renderStatus(h.run, now, 'step 2/3'));
    expect(text).toContain(`Run ${RUN_ID} · Demo`);
    expect(text).toContain('Running step 2 of 3 (build)');
    // Every mark carries a word (issue 29).
    expect(text).toContain('✅ plan · approved · 1 s');
    expect(text).toMatch(/⏳ build · running 1 min( \d+ s)? · step 2\/3/);
    expect(text).toContain('▫️ review · not started');
    expect(text).toContain('Started by: Alice');
    expect(text).toContain('Spent: 10 in / 5 out · $0.50');
    expect(renderStatus(h.run, now).buttons).toBeUndefined();
  });

  it('shows a waiting checkpoint, a failure and the end', () => {
    const h = new Harness();
    h.start(DEMO_WORKFLOW);
    h.finish();
    expect(body(renderStatus(h.run, BASE_TIME))).toContain(
      'Waiting for an answer at checkpoint plan:1',
    );
    expect(body(renderStatus(h.run, BASE_TIME))).toContain(
      '✅ plan · done · 1 s · ✋ waiting for approval',
    );
    h.ok({ type: 'answerCheckpoint', answer: 'reject', reason: 'wrong plan', actor: ALICE });
    const text = body(renderStatus(h.run, BASE_TIME));
    expect(text).toContain('Failed: rejected by Alice: wrong plan');
    expect(plainTextOf(outcomeMessage(h.run).text)).toBe(
      `❌ Run ${RUN_ID} Failed: rejected by Alice: wrong plan`,
    );
  });

  it('marks a failed step with its error', () => {
    const h = new Harness();
    h.start(DEMO_WORKFLOW);
    h.ok({ type: 'stepStarted', stepId: 'plan', attempt: 1 });
    h.fail('agent binary not found');
    const text = body(renderStatus(h.run, BASE_TIME));
    expect(text).toContain('❌ plan · failed · 1 s · agent binary not found');
    expect(text).toContain('agent binary not found');
    expect(text).toContain('Blocked, needs a human');
  });
});
