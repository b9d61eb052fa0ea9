import fs from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { HandEdit } from '../../../../src/engine/layouts/codemachine/hand-edits.ts';
import {
  checkHandEdit,
  detectHandEdit,
  FILE_EDIT_ACTOR,
  handEditCommand,
  type TemplateTracking,
} from '../../../../src/engine/layouts/codemachine/index.ts';
import { codemachinePaths } from '../../../../src/engine/layouts/codemachine/paths.ts';
import type { RunState } from '../../../../src/engine/model.ts';
import { type Harness, makeHarness } from './helpers.ts';

/** Runs plan, build and review to completion-but-last: review is running. */
async function threeStepsIn(h: Harness): Promise<void> {
  await h.d.start({ selectedTrack: 'enterprise' });
  for (const id of ['plan', 'build', 'audit']) {
    await h.d.started(id);
    await h.session(id);
    await h.d.finished(id);
  }
  await h.d.started('review');
}

function readTemplate(h: Harness): TemplateTracking {
  return JSON.parse(fs.readFileSync(codemachinePaths(h.ws).template, 'utf8')) as TemplateTracking;
}

function writeTemplate(h: Harness, doc: unknown): void {
  fs.writeFileSync(codemachinePaths(h.ws).template, JSON.stringify(doc, null, 2));
}

/** Removes these step indices from completedSteps in the file, as a user would. */
function removeSteps(h: Harness, ...indices: number[]): void {
  const doc = readTemplate(h);
  for (const i of indices) delete doc.completedSteps![String(i)];
  writeTemplate(h, doc);
}

/** Carries out a detected edit through the store, as the orchestrator does. */
async function apply(h: Harness, edit: HandEdit): Promise<RunState> {
  const command = handEditCommand(edit, h.d.run, h.d.now());
  if (command === null) throw new Error(`no command for ${edit.kind}`);
  const r = await h.store.commit(h.d.run.id, `edit-${h.d.now()}`, command);
  if (!r.ok) throw new Error(r.rejection.message);
  h.d.state = r.state;
  return r.state;
}

describe('hand edits of template.json', () => {
  let h: Harness;
  beforeEach(async () => {
    h = makeHarness();
    await threeStepsIn(h);
  });
  afterEach(async () => {
    await h.dispose();
  });

  it('sees no edit when the file is as written', () => {
    expect(checkHandEdit(h.d.run)).toEqual({ kind: 'none' });
  });

  it('re-runs the last completed step when it is removed', async () => {
    removeSteps(h, 2);
    const edit = checkHandEdit(h.d.run);
    expect(edit).toEqual({ kind: 'revert', toIndex: 2 });
    const state = await apply(h, edit);
    expect(state.cursor).toBe(2);
    expect(state.steps.map((s) => s.status)).toEqual([
      'completed',
      'completed',
      'queued',
      'pending',
    ]);
    expect(Object.keys(readTemplate(h).completedSteps!)).toEqual(['0', '1']);
    expect(checkHandEdit(state)).toEqual({ kind: 'none' });
  });

  it('re-runs from a middle step when it and the later ones are removed', async () => {
    removeSteps(h, 1, 2);
    const edit = checkHandEdit(h.d.run);
    expect(edit).toEqual({ kind: 'revert', toIndex: 1 });
    const state = await apply(h, edit);
    expect(state.cursor).toBe(1);
    expect(Object.keys(readTemplate(h).completedSteps!)).toEqual(['0']);
    expect(readTemplate(h).notCompletedSteps).toEqual([1]);
  });

  it('re-runs from a middle step even when only that one is removed', () => {
    removeSteps(h, 1);
    expect(checkHandEdit(h.d.run)).toEqual({ kind: 'revert', toIndex: 1 });
  });

  it('resets the run when completedSteps is cleared', async () => {
    writeTemplate(h, { ...readTemplate(h), completedSteps: {}, notCompletedSteps: [] });
    const edit = checkHandEdit(h.d.run);
    expect(edit).toEqual({ kind: 'reset' });
    const state = await apply(h, edit);
    expect(state.cursor).toBe(0);
    expect(state.steps[0]!.status).toBe('queued');
    expect(readTemplate(h).completedSteps).toEqual({});
  });

  it('resets the run when template.json is deleted', async () => {
    fs.rmSync(codemachinePaths(h.ws).template);
    const edit = checkHandEdit(h.d.run);
    expect(edit).toEqual({ kind: 'reset' });
    const state = await apply(h, edit);
    expect(state.cursor).toBe(0);
    expect(fs.existsSync(codemachinePaths(h.ws).template)).toBe(true);
  });

  it('reports a garbage file and never resets the run for it', () => {
    fs.writeFileSync(codemachinePaths(h.ws).template, '{"completedSteps": {"0": ');
    const edit = checkHandEdit(h.d.run);
    expect(edit.kind).toBe('unreadable');
    expect((edit as { reason: string }).reason).toMatch(/template\.json is not valid JSON/);
    expect(handEditCommand(edit, h.d.run, h.d.now())).toBeNull();
  });

  it('reports a file of the wrong shape as unreadable', () => {
    writeTemplate(h, { ...readTemplate(h), completedSteps: 'all of them' });
    const edit = checkHandEdit(h.d.run);
    expect(edit.kind).toBe('unreadable');
    expect((edit as { reason: string }).reason).toMatch(/completedSteps/);
  });

  it('records the edit as a human action from a file edit', async () => {
    removeSteps(h, 2);
    const command = handEditCommand(checkHandEdit(h.d.run), h.d.run, h.d.now());
    expect(command).toMatchObject({ type: 'revert', toStepId: 'audit', source: 'file-edit' });
    expect(command!.actor).toEqual(FILE_EDIT_ACTOR);
  });

  it('ignores edits that remove nothing complete', () => {
    const doc = readTemplate(h);
    writeTemplate(h, { ...doc, lastUpdated: '1999-01-01T00:00:00.000Z', notCompletedSteps: [] });
    expect(checkHandEdit(h.d.run)).toEqual({ kind: 'none' });
  });
});

describe('hand edits noticed during a commit (onHandEdit)', () => {
  let h: Harness;
  let seen: HandEdit[];
  let keep: boolean;
  beforeEach(async () => {
    seen = [];
    keep = true;
    h = makeHarness({
      onHandEdit: (edit) => {
        seen.push(edit);
        return keep;
      },
    });
    await threeStepsIn(h);
  });
  afterEach(async () => {
    await h.dispose();
  });

  it('keeps the edited file so the next commit cannot wipe the edit out', async () => {
    removeSteps(h, 1, 2);
    await h.session('review');
    expect(seen).toEqual([{ kind: 'revert', toIndex: 1 }]);
    expect(Object.keys(readTemplate(h).completedSteps!)).toEqual(['0']);
    const state = await apply(h, checkHandEdit(h.d.run));
    expect(state.cursor).toBe(1);
    expect(readTemplate(h).notCompletedSteps).toEqual([1]);
  });

  it('overwrites the file when the handler declines', async () => {
    keep = false;
    removeSteps(h, 2);
    await h.session('review');
    expect(seen).toEqual([{ kind: 'revert', toIndex: 2 }]);
    expect(Object.keys(readTemplate(h).completedSteps!)).toEqual(['0', '1', '2', '3']);
  });

  it('reports a garbage file and repairs it from the run state', async () => {
    fs.writeFileSync(codemachinePaths(h.ws).template, 'not json');
    await h.session('review');
    expect(seen.map((e) => e.kind)).toEqual(['unreadable']);
    expect(h.d.run.cursor).toBe(3);
    expect(Object.keys(readTemplate(h).completedSteps!)).toEqual(['0', '1', '2', '3']);
  });
});

describe('detectHandEdit', () => {
  const done = (at: string) => ({ sessionId: 's', monitoringId: 1, completedAt: at });
  const written: TemplateTracking = {
    activeTemplate: 'x.workflow.yaml',
    lastUpdated: 't',
    completedSteps: { '0': done('a'), '1': done('b'), '2': { sessionId: 's', monitoringId: 3 } },
    notCompletedSteps: [2],
  };

  it('ignores a removed entry of an unfinished step', () => {
    const onDisk = { ...written, completedSteps: { '0': done('a'), '1': done('b') } };
    expect(detectHandEdit(written, onDisk)).toEqual({ kind: 'none' });
  });

  it('sees nothing to undo when nothing was written yet and the file is empty', () => {
    const empty = { ...written, completedSteps: {} };
    expect(detectHandEdit(empty, { ...empty, completedSteps: {} })).toEqual({ kind: 'none' });
  });

  it('treats a missing completedSteps key as cleared', () => {
    const { completedSteps: _, ...rest } = written;
    expect(detectHandEdit(written, rest)).toEqual({ kind: 'reset' });
  });

  it('passes the parse error on in the reason', () => {
    const edit = detectHandEdit(written, 'unparseable', 'template.json is not valid JSON: boom');
    expect(edit).toEqual({
      kind: 'unreadable',
      reason: 'template.json is not valid JSON: boom; fix the file or delete it',
    });
  });
});
