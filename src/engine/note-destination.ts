/**
 * Where a human's note goes, pure (issue 29): a note is never read by the attempt already
 * running; it waits for the next agent attempt of the run. At an open checkpoint that attempt
 * depends on the decision: the step the approval lets run, or the step Request changes sends the
 * run back to. Used by the engine to forward notes and by chat and CLI to say where they go.
 */
import type {
  CheckpointKind,
  CheckpointState,
  FeedbackEntry,
  RunState,
  StepState,
} from './model.ts';
import { findStep, stepIndex } from './model.ts';

/** A step and the attempt of it that will read a note. */
export interface NoteTarget {
  stepId: string;
  attempt: number;
}

/** Where a note given now goes, for each way the run may go on. */
export interface NoteDestinations {
  /** True at an open checkpoint: the decision says where the note goes. */
  atCheckpoint?: boolean;
  /** At an open checkpoint: the step its approval runs (absent when approving ends the run). */
  withApproval?: NoteTarget;
  /** At an open checkpoint: the step Request changes sends the run back to, when it offers that. */
  ifChanges?: NoteTarget;
  /** Not at a checkpoint: the current step's next attempt, if it runs again. */
  again?: NoteTarget;
  /** Not at a checkpoint: the next step, if the current one is not run again. */
  next?: NoteTarget;
}

function target(step: StepState | undefined): NoteTarget | undefined {
  return step === undefined ? undefined : { stepId: step.id, attempt: step.attempt + 1 };
}

/** The first step after `index` that will run (not excluded, not skipped ahead). */
function stepAfter(state: RunState, index: number): StepState | undefined {
  return state.steps.slice(index + 1).find((s) => !s.excluded && s.status !== 'skipped');
}

/**
 * Where Request changes at a checkpoint of `step` sends the run: the step's `loop.backTo`; else
 * the step itself once it ran, or the runnable step before it at a `before` gate.
 */
export function changesTargetOf(
  state: RunState,
  step: StepState,
  kind: CheckpointKind,
): StepState | undefined {
  const loop = state.workflow.steps[step.index]?.loop;
  if (loop) return state.steps.find((s) => s.id === loop.backTo);
  if (kind !== 'before') return step;
  return state.steps
    .slice(0, step.index)
    .reverse()
    .find((s) => !s.excluded);
}

/** The step an approval of `cp` lets run: the gated step, or the next one that will run. */
export function approvalTargetOf(state: RunState, cp: CheckpointState): StepState | undefined {
  const at = stepIndex(state, cp.stepId);
  if (cp.when === 'before') return state.steps[at];
  return stepAfter(state, at);
}

/**
 * The step that runs when the run goes back to `step`: `step`, or the first after it when the
 * run passes it over (excluded, skipped ahead, or an executeOnce step that completed), as
 * decide-flow's enterStep does.
 */
function runsInPlaceOf(state: RunState, step: StepState | undefined): StepState | undefined {
  if (step === undefined) return undefined;
  return state.steps.slice(step.index).find((s) => {
    const once = state.workflow.steps[s.index]?.executeOnce === true && s.status === 'completed';
    return !s.excluded && s.status !== 'skipped' && !once;
  });
}

/** Where a note given to the run now goes (empty for a run with no current step). */
export function noteDestinations(state: RunState): NoteDestinations {
  const cp = state.checkpoint;
  if (cp) {
    const gated = findStep(state, cp.stepId);
    const approval = target(approvalTargetOf(state, cp));
    const back = gated !== undefined && cp.answers.includes('loop');
    const changes = back
      ? target(runsInPlaceOf(state, changesTargetOf(state, gated, cp.when)))
      : undefined;
    return {
      atCheckpoint: true,
      ...(approval !== undefined && { withApproval: approval }),
      ...(changes !== undefined && { ifChanges: changes }),
    };
  }
  const step = state.steps[state.cursor];
  if (step === undefined) return {};
  const next = target(stepAfter(state, step.index));
  return { again: target(step), ...(next !== undefined && { next }) };
}

/** True while no attempt has read the note yet: its step has not reached that attempt. */
export function isUndelivered(state: RunState, entry: FeedbackEntry): boolean {
  const step = findStep(state, entry.stepId);
  return step !== undefined && step.attempt < entry.forAttempt;
}

/** Guidance still waiting for an attempt (the notes a pending decision carries), oldest first. */
export function pendingNotes(state: RunState): FeedbackEntry[] {
  return (state.feedback ?? []).filter((f) => f.kind === 'guidance' && isUndelivered(state, f));
}
