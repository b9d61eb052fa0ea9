/** What `status` says about each kind of pending template.json hand edit (real engine states). */
import { describe, expect, it } from 'vitest';
import { describeHandEdit } from '../../../../src/engine/layouts/codemachine/hand-edit-plan.ts';
import { approve, runCurrentStep, started } from '../../../cli/render/demo-states.ts';

describe('describeHandEdit', () => {
  const atPlan = started().state;
  const atBuild = approve(runCurrentStep(atPlan, 1).state, 4).state;

  it('says nothing when the file is as we wrote it', () => {
    expect(describeHandEdit(atPlan, { kind: 'none' })).toEqual([]);
  });

  it('names the step that runs again, the reset, and the skipped steps', () => {
    expect(describeHandEdit(atBuild, { kind: 'revert', toIndex: 0 })).toEqual([
      'template.json was edited: step 0 (plan) and the steps after it will run again at the next command to the run',
    ]);
    expect(describeHandEdit(atBuild, { kind: 'revert', toIndex: 2 })).toEqual([
      'template.json was edited: step 2 (review) will run again at the next command to the run',
    ]);
    expect(describeHandEdit(atBuild, { kind: 'reset' })).toEqual([
      'template.json was edited: the run starts over from step 0 at the next command to the run',
    ]);
    expect(describeHandEdit(atPlan, { kind: 'skip', indexes: [2, 0] })).toEqual([
      'template.json was edited: step 0 (plan), step 2 (review) will be skipped at the next command to the run',
    ]);
  });

  it('says when an entry cannot skip anything, and when the file is unreadable', () => {
    expect(describeHandEdit(atBuild, { kind: 'skip', indexes: [0] })[0]).toContain(
      'step 0 marked completed cannot be skipped',
    );
    expect(describeHandEdit(atPlan, { kind: 'unreadable', reason: 'bad JSON' })).toEqual([
      'template.json cannot be read (bad JSON); the run keeps its progress',
    ]);
  });
});
