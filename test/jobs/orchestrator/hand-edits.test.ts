/**
 * CodeMachine users edit `.codemachine/template.json` by hand: the orchestrator honours the edit
 * at the next command and at start-up, recorded as a human action from a file edit; a garbled
 * file never resets the run.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { RunState } from '../../../src/engine/model.ts';
import type { Orchestrator } from '../../../src/jobs/orchestrator/orchestrator.ts';
import { ALICE, approve, ledgerOf, makeEnv, type TestEnv } from './helpers.ts';

let env: TestEnv | undefined;
afterEach(async () => {
  await env?.dispose();
  env = undefined;
});

/** A codemachine demo run waiting at its review checkpoint (plan, build, review completed). */
async function atReview(): Promise<{ o: Orchestrator; state: RunState; template: string }> {
  process.env.DEMO_AGENT_BEHAVIOUR = 'sleep=10';
  env = await makeEnv();
  const o = await env.open();
  const started = await o.startRun({
    workflow: 'demo',
    workspace: env.workspace,
    spec: 'hand edits',
    actor: ALICE,
    layout: 'codemachine',
  });
  await o.waitUntilIdle(started.id);
  const state = await approve(o, started.id, 'cli:approve-plan');
  expect(state.checkpoint?.stepId).toBe('review');
  return { o, state, template: path.join(env.workspace, '.codemachine', 'template.json') };
}

const pause = { type: 'pause', actor: ALICE } as const;

describe('hand edits of template.json (codemachine layout)', () => {
  it('removing steps from completedSteps re-runs from the first removed step', async () => {
    const { o, state, template } = await atReview();
    const doc = JSON.parse(fs.readFileSync(template, 'utf8'));
    expect(Object.keys(doc.completedSteps)).toEqual(['0', '1', '2']);
    delete doc.completedSteps['1'];
    delete doc.completedSteps['2'];
    fs.writeFileSync(template, JSON.stringify(doc, null, 2));

    // The user's next command meets the edited run: build is running again, no checkpoint open.
    const result = await o.command(state.id, 'cli:pause-1', pause);
    expect(result.ok).toBe(true);
    const revert = ledgerOf(state).find((e) => e.command === 'revert');
    expect(revert?.actor).toEqual({
      id: 'file:.codemachine/template.json',
      name: 'template.json edit',
    });
    expect(JSON.stringify(revert?.events)).toContain('"source":"file-edit"');
    const after = await o.getRun(state.id);
    expect(after.steps.map((s) => s.status)).toEqual([
      'completed',
      expect.not.stringMatching(/^completed$/),
      'pending',
    ]);
    expect(after.steps[1]!.attempt).toBe(2);
  });

  it('deleting template.json resets the run to its first step, also across a restart', async () => {
    const { state, template } = await atReview();
    fs.rmSync(template);
    // A new orchestrator (as after a restart) applies the edit while starting up.
    const o2 = await env!.open({ worker: false });
    const after = await o2.getRun(state.id);
    const reset = ledgerOf(state).find((e) => e.command === 'reset');
    expect(reset?.actor.id).toBe('file:.codemachine/template.json');
    expect(after.cursor).toBe(0);
    expect(after.steps[0]!.attempt).toBe(2);
  });

  it('adding a later step to completedSteps skips it when the run gets there', async () => {
    process.env.DEMO_AGENT_BEHAVIOUR = 'sleep=10';
    env = await makeEnv();
    const o = await env.open();
    const started = await o.startRun({
      workflow: 'demo',
      workspace: env.workspace,
      spec: 'skip ahead',
      actor: ALICE,
      layout: 'codemachine',
    });
    const atPlan = await o.waitUntilIdle(started.id);
    expect(atPlan.checkpoint?.stepId).toBe('plan');
    const template = path.join(env.workspace, '.codemachine', 'template.json');
    const doc = JSON.parse(fs.readFileSync(template, 'utf8'));
    doc.completedSteps['2'] = { sessionId: '', monitoringId: 0, completedAt: atPlan.updatedAt };
    fs.writeFileSync(template, JSON.stringify(doc, null, 2));

    await approve(o, started.id, 'cli:approve-plan');
    const done = await o.waitUntilIdle(started.id);
    expect(done.status).toBe('completed');
    expect(done.steps.map((s) => [s.status, s.attempt])).toEqual([
      ['completed', 1],
      ['completed', 1],
      ['skipped', 0],
    ]);
    const skip = ledgerOf(started).find((e) => e.command === 'skip');
    expect(skip?.actor.id).toBe('file:.codemachine/template.json');
    expect(Object.keys(JSON.parse(fs.readFileSync(template, 'utf8')).completedSteps)).toEqual([
      '0',
      '1',
      '2',
    ]);
  });

  it('a garbled template.json is reported and never resets progress', async () => {
    const { o, state, template } = await atReview();
    fs.writeFileSync(template, '{ not json');
    const result = await o.command(state.id, 'cli:approve-review', {
      type: 'answerCheckpoint',
      answer: 'approve',
      actor: ALICE,
    });
    expect(result.ok).toBe(true);
    expect(ledgerOf(state).some((e) => e.command === 'reset' || e.command === 'revert')).toBe(
      false,
    );
    const done = await o.waitUntilIdle(state.id);
    expect(done.status).toBe('completed');
  });
});
