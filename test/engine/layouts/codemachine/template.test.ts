import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { codemachinePaths } from '../../../../src/engine/layouts/codemachine/paths.ts';
import {
  buildTemplate,
  serializeTemplate,
} from '../../../../src/engine/layouts/codemachine/template.ts';
import { parseWorkflow } from '../../../../src/engine/workflow/load.ts';
import { Driver } from './driver.ts';
import { type Harness, makeHarness } from './helpers.ts';

const GOLDEN_DIR = path.join(import.meta.dirname, 'golden');

/** Compares template.json byte for byte with a golden file (UPDATE_GOLDEN=1 rewrites them). */
function expectGolden(h: Harness, name: string): void {
  const actual = fs.readFileSync(codemachinePaths(h.ws).template, 'utf8');
  const file = path.join(GOLDEN_DIR, `${name}.golden.json`);
  if (process.env.UPDATE_GOLDEN === '1') fs.writeFileSync(file, actual);
  expect(actual, name).toBe(fs.readFileSync(file, 'utf8'));
}

describe('template.json through CodeMachine State Transitions', () => {
  let h: Harness;
  beforeEach(() => {
    h = makeHarness();
  });
  afterEach(async () => {
    await h.dispose();
  });

  it('matches the golden file after each row of the table', async () => {
    const { d } = h;
    // Onboarding and Workflow Start are one `start` command here: track and conditions come with it.
    await d.start({ selectedTrack: 'quick', selectedConditions: ['tests'] });
    expectGolden(h, '01-onboarding-and-workflow-start');

    await d.started('plan');
    expectGolden(h, '02-step-starts');

    await h.session('plan');
    expectGolden(h, '03-session-init');

    await d.send({ type: 'chainCompleted', stepId: 'plan', chainIndex: 0 });
    await d.send({ type: 'chainCompleted', stepId: 'plan', chainIndex: 1 });
    expectGolden(h, '04-chain-complete');

    await d.finished('plan');
    expectGolden(h, '05-step-complete');

    await d.started('build');
    await h.session('build');
    await d.finished('build');
    await d.started('review');
    await h.session('review');
    await d.finished('review', { action: 'loop', reason: 'tests failed' });
    expectGolden(h, '06-loop-triggered');

    // What the file says at the moment the process dies mid-step.
    await d.started('build');
    await h.session('build');
    expectGolden(h, '07-crash-occurs');

    await d.send({ type: 'recoverInterrupted' });
    expectGolden(h, '08-crash-recovered');

    await d.started('build');
    await h.session('build');
    await d.finished('build');
    await d.started('review');
    await h.session('review');
    await d.finished('review');
    expect(d.run.status).toBe('completed');
    expectGolden(h, '09-workflow-ends');
  });
});

describe('buildTemplate', () => {
  it('is two-space JSON with a final newline, keys in the schema order', async () => {
    const d = new Driver('/ws');
    await d.start();
    const text = serializeTemplate(buildTemplate(d.run));
    expect(text.endsWith('}\n')).toBe(true);
    expect(Object.keys(JSON.parse(text))).toEqual([
      'activeTemplate',
      'lastUpdated',
      'completedSteps',
      'notCompletedSteps',
      'resumeFromLastStep',
      'selectedConditions',
    ]);
  });

  it('gives a step excluded by the track no entry, so resume indices stay the workflow indices', async () => {
    const d = new Driver('/ws');
    await d.start({ selectedTrack: 'quick' });
    for (const id of ['plan', 'build', 'review']) {
      await d.started(id);
      await d.finished(id);
    }
    expect(Object.keys(buildTemplate(d.run).completedSteps!)).toEqual(['0', '1', '3']);
  });

  it('marks a skipped step complete (CodeMachine Ctrl+S)', async () => {
    const d = new Driver('/ws');
    await d.start();
    await d.started('plan');
    await d.send({ type: 'skip', reason: 'not needed' });
    const doc = buildTemplate(d.run);
    expect(doc.completedSteps!['0']).toEqual({
      sessionId: '',
      monitoringId: 0,
      completedAt: d.run.steps[0]!.finishedAt,
    });
    expect(doc.notCompletedSteps).toEqual([]);
  });

  it('keeps a step cancelled by a pause in notCompletedSteps', async () => {
    const d = new Driver('/ws');
    await d.start();
    await d.started('plan');
    await d.send({ type: 'pause', reason: 'lunch' });
    expect(buildTemplate(d.run).notCompletedSteps).toEqual([0]);
  });

  it('keeps the entry of a completed executeOnce step when a loop passes over it', async () => {
    const workflow = parseWorkflow(
      `id: once
steps:
  - { id: setup, agent: a, prompt: p }
  - { id: scaffold, agent: a, prompt: p, executeOnce: true }
  - { id: build, agent: a, prompt: p }
  - { id: review, agent: a, prompt: p, loop: { backTo: setup, max: 1 } }
`,
      { file: 'once.workflow.yaml' },
    );
    const d = new Driver('/ws');
    await d.send({
      type: 'start',
      runId: '2026-01-02T030400Z-once',
      workflow,
      workspace: '/ws',
      layout: 'codemachine',
      spec: '',
    });
    for (const id of ['setup', 'scaffold', 'build']) {
      await d.started(id);
      await d.finished(id);
    }
    await d.started('review');
    await d.finished('review', { action: 'loop' });
    const doc = buildTemplate(d.run);
    expect(Object.keys(doc.completedSteps!)).toEqual(['1']);
    expect(doc.notCompletedSteps).toEqual([0]);
  });
});
