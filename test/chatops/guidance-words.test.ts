/** Issue 29: a note's acknowledgement says which attempt reads it; the checkpoint counts notes. */
import { describe, expect, it } from 'vitest';
import { pendingNotesWords } from '../../src/chatops/checkpoint-message.ts';
import { noteWhereWords } from '../../src/chatops/guidance.ts';
import { noteDestinations, pendingNotes } from '../../src/engine/note-destination.ts';
import { BOB, CAROL, Harness, wf } from '../engine/harness.ts';

const FLOW = wf(`
id: flow
steps:
  - id: plan
    agent: planner
    prompt: plan it
    checkpoint: { when: after }
  - id: build
    agent: coder
    prompt: build it
  - id: ship
    agent: shipper
    prompt: ship it
    checkpoint: { when: after, requestChanges: false }
`);

describe('where a note goes, in words', () => {
  it('at a checkpoint: the approval’s step, or the re-run if changes are requested', () => {
    const h = new Harness();
    h.start(FLOW);
    h.finish();
    expect(noteWhereWords(noteDestinations(h.run))).toBe(
      'goes to build with the approval; it goes to plan, attempt 2 if changes are requested',
    );
  });

  it('off a checkpoint: kept for the next attempt, and said so', () => {
    const h = new Harness();
    h.start(FLOW);
    expect(noteWhereWords(noteDestinations(h.run))).toBe(
      'kept for the next attempt: plan, attempt 2 if it runs again, else to build (the attempt running now does not see it)',
    );
  });

  it('at the last checkpoint without Request changes no agent would read it, and it says so', () => {
    const h = new Harness();
    h.start(FLOW);
    h.finish();
    h.ok({ type: 'answerCheckpoint', answer: 'approve', actor: BOB });
    h.finish();
    h.finish();
    expect(h.run.checkpoint?.id).toBe('ship:1');
    expect(noteWhereWords(noteDestinations(h.run))).toBe(
      'kept with the run; approving ends it, so no agent will read it',
    );
  });

  it('the checkpoint counts the notes waiting for its decision, naming their authors once', () => {
    const h = new Harness();
    h.start(FLOW);
    h.finish();
    h.ok({ type: 'giveGuidance', actor: CAROL, text: 'one' });
    h.ok({ type: 'giveGuidance', actor: CAROL, text: 'two' });
    h.ok({ type: 'giveGuidance', actor: BOB, text: 'three' });
    const authors = pendingNotes(h.run).map((f) => f.by);
    expect(pendingNotesWords(authors.slice(0, 1))).toBe(
      '1 note from Carol will go with the decision',
    );
    expect(pendingNotesWords(authors)).toBe('3 notes from Carol and Bob will go with the decision');
    // Approved: build's first attempt is queued with them, nothing is pending any more.
    h.ok({ type: 'answerCheckpoint', answer: 'approve', actor: BOB });
    expect(pendingNotes(h.run)).toEqual([]);
    expect(h.run.feedback?.map((f) => `${f.stepId}:${f.forAttempt}`)).toEqual([
      'build:1',
      'build:1',
      'build:1',
    ]);
  });
});
