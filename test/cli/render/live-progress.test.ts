import { describe, expect, it } from 'vitest';
import { LiveProgress, type LiveUpdate } from '../../../src/cli/render/live-progress.ts';
import { apply, approve, RUN_ID, runCurrentStep, started } from './demo-states.ts';

function collector(columns = 120) {
  const chunks: string[] = [];
  return { chunks, columns, write: (c: string) => chunks.push(c), text: () => chunks.join('') };
}

/** The updates of the demo run up to plan's checkpoint being approved and build running. */
function demoUpdates(): LiveUpdate[] {
  const updates: LiveUpdate[] = [];
  const push = (s: { state: LiveUpdate['state']; events: LiveUpdate['events'] }) => {
    updates.push({ runId: RUN_ID, state: s.state, events: s.events });
    return s.state;
  };
  let state = push(started());
  state = push(runCurrentStep(state, 1));
  state = push(approve(state, 4));
  push(
    apply(
      state,
      { type: 'stepStarted', actor: { id: 'system' }, stepId: 'build', attempt: 1 } as never,
      5,
    ),
  );
  return updates;
}

describe('LiveProgress, plain lines (stdout is not a terminal)', () => {
  it('prints one line per phase change and per progress text, replaying what came before the id was known', () => {
    const out = collector();
    const live = new LiveProgress(out, { tty: false });
    const [first, ...rest] = demoUpdates();
    live.update(first!);
    live.update({ ...first!, runId: '2026-11-29T143000Z-other' });
    live.follow(RUN_ID);
    for (const u of rest) live.update(u);
    live.progress({ runId: RUN_ID, stepId: 'build', text: 'step 1/3' });
    live.stop();
    live.progress({ runId: RUN_ID, stepId: 'build', text: 'after stop' });
    expect(out.text().trimEnd().split('\n')).toEqual([
      `run ${RUN_ID} started: workflow demo (3 steps), layout native`,
      'plan: queued (attempt 1)',
      'plan: running (attempt 1)',
      'plan: completed in 2.0s (1.8k tokens, $0.0123)',
      'checkpoint plan:1 opened: step plan finished: approve to continue',
      'checkpoint plan:1: approve by telegram:42',
      'build: queued (attempt 1)',
      'build: running (attempt 1)',
      'build: step 1/3',
    ]);
  });
});

describe('LiveProgress on a terminal', () => {
  it('redraws the step list in place and shows the running step’s progress', () => {
    const out = collector();
    const live = new LiveProgress(out, { tty: true, frameMs: 60_000 });
    live.follow(RUN_ID);
    for (const u of demoUpdates()) live.update(u);
    live.progress({ runId: RUN_ID, stepId: 'build', text: 'step 2/3' });
    live.stop();
    const frames = out.chunks;
    // Every frame after the first moves up over the 4 lines drawn before and clears below.
    expect(frames[0]!.startsWith('\x1b[0J')).toBe(true);
    expect(frames.at(-1)!.startsWith('\x1b[4F\x1b[0J')).toBe(true);
    const last = frames.at(-1)!.replace('\x1b[4F\x1b[0J', '').trimEnd().split('\n');
    expect(last[0]).toBe(`run ${RUN_ID}  active`);
    expect(last[1]).toMatch(/^✔ plan\s+completed/);
    expect(last[2]).toMatch(/^⠋ build\s+running\s+\S+\s+step 2\/3$/);
    expect(last[3]).toMatch(/^· review\s+pending$/);
  });
});
