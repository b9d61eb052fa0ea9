/**
 * Issue 18 item 6: a completedSteps entry added by hand skips that step, also a later one (it is
 * skipped ahead and passed over when the run gets there), as CodeMachine's "skip by
 * completedSteps" reads the file.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  checkHandEdit,
  FILE_EDIT_ACTOR,
  skipTargets,
} from '../../../../src/engine/layouts/codemachine/index.ts';
import { codemachinePaths } from '../../../../src/engine/layouts/codemachine/paths.ts';
import { RUN_ID } from './driver.ts';
import { type Harness, makeHarness } from './helpers.ts';

const GOLDEN = path.join(import.meta.dirname, 'golden', 'fidelity');

function expectGolden(h: Harness, name: string): void {
  const actual = fs.readFileSync(codemachinePaths(h.ws).template, 'utf8');
  const file = path.join(GOLDEN, `${name}.golden.json`);
  if (process.env.UPDATE_GOLDEN === '1') fs.writeFileSync(file, actual);
  expect(actual, name).toBe(fs.readFileSync(file, 'utf8'));
}

describe('a completedSteps entry added by hand', () => {
  let h: Harness;
  beforeEach(() => {
    h = makeHarness();
  });
  afterEach(async () => {
    await h.dispose();
  });

  it('skips a later step: marked now, passed over when reached (golden before/after)', async () => {
    await h.d.start({ selectedTrack: 'quick' });
    await h.d.started('plan');
    const file = codemachinePaths(h.ws).template;
    const doc = JSON.parse(fs.readFileSync(file, 'utf8'));
    // review (index 3) marked done by hand while plan runs.
    doc.completedSteps['3'] = { sessionId: '', monitoringId: 0, completedAt: h.d.now() };
    fs.writeFileSync(file, JSON.stringify(doc, null, 2));
    expectGolden(h, '06-skip-ahead-before');

    const edit = checkHandEdit(h.d.run);
    expect(edit).toEqual({ kind: 'skip', indexes: [3] });
    if (edit.kind !== 'skip') return;
    const { current, ahead } = skipTargets(h.d.run, edit.indexes);
    expect(current).toBeUndefined();
    expect(ahead.map((s) => s.id)).toEqual(['review']);
    const r = await h.store.commit(RUN_ID, 'skip-ahead', {
      type: 'skip',
      stepId: 'review',
      ahead: true,
      reason: 'marked completed in template.json',
      at: h.d.now(),
      actor: FILE_EDIT_ACTOR,
    });
    if (!r.ok) throw new Error(r.rejection.message);
    h.d.state = r.state;
    expect(h.d.run.cursor).toBe(0);
    expect(h.d.run.steps[0]!.status).toBe('running');
    expectGolden(h, '06-skip-ahead-after');

    await h.d.finished('plan');
    await h.d.started('build');
    await h.d.finished('build');
    expect(h.d.run.status).toBe('completed');
    expect(h.d.run.steps.find((s) => s.id === 'review')!.attempt).toBe(0);
    expect(checkHandEdit(h.d.run)).toEqual({ kind: 'none' });
  });

  it('cannot skip a step before the current one: not a target, and the engine refuses it', async () => {
    await h.d.start();
    await h.d.started('plan');
    await h.d.finished('plan');
    expect(skipTargets(h.d.run, [0])).toEqual({ ahead: [] });
    await expect(h.d.send({ type: 'skip', stepId: 'plan', ahead: true })).rejects.toThrow(
      'step plan cannot be skipped ahead: it is not a later step still to run',
    );
  });

  it('a loop back over a skipped-ahead step runs it on the next pass', async () => {
    await h.d.start({ selectedTrack: 'quick' });
    await h.d.send({ type: 'skip', stepId: 'build', ahead: true });
    await h.d.started('plan');
    await h.d.finished('plan');
    expect(h.d.run.steps[h.d.run.cursor]!.id).toBe('review');
    await h.d.started('review');
    await h.d.finished('review', { action: 'loop' });
    expect(h.d.run.steps[h.d.run.cursor]!.id).toBe('build');
    expect(h.d.run.steps[1]!.status).toBe('queued');
  });
});
