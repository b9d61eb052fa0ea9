/**
 * Reviewers' words as ledger facts: the reason of a Request changes, the reasons given with an
 * approval (for the step that runs next) and guidance replies. Each becomes a `feedbackRecorded`
 * event naming the step and the first attempt that receives it; the orchestrator hands it to that
 * attempt's agent (prompt section, feedback file, resumed session).
 */
import type { GiveGuidanceCommand } from './commands.ts';
import { type DecideContext, refuse } from './decide-context.ts';
import type { Actor, CheckpointState, FeedbackEntry, StepState } from './model.ts';
import { approvalTargetOf, changesTargetOf, isUndelivered } from './note-destination.ts';

/** Longest guidance text kept (a chat message may be longer; the agent gets the start). */
export const MAX_FEEDBACK_CHARS = 4000;

function record(ctx: DecideContext, entry: FeedbackEntry): void {
  ctx.emit({ type: 'feedbackRecorded', entry });
}

function entryFor(
  step: StepState,
  kind: FeedbackEntry['kind'],
  by: Actor,
  at: string,
  text: string,
  checkpointId?: string,
): FeedbackEntry {
  return {
    stepId: step.id,
    forAttempt: step.attempt + 1,
    kind,
    by,
    at,
    text: text.trim().slice(0, MAX_FEEDBACK_CHARS),
    ...(checkpointId !== undefined ? { checkpointId } : {}),
  };
}

/** The reason of a Request changes, for the next attempt of the step that runs again. */
export function recordChanges(
  ctx: DecideContext,
  cp: CheckpointState,
  target: StepState,
  by: Actor,
  reason: string,
): void {
  record(ctx, entryFor(target, 'changes', by, ctx.at, reason, cp.id));
}

/**
 * Every approving vote's reason, for the step the approval lets run; the notes given at the
 * checkpoint go there too.
 */
export function recordApprovalReasons(ctx: DecideContext, cp: CheckpointState): void {
  const step = approvalTargetOf(ctx.state, cp);
  if (step === undefined) return;
  forwardNotes(ctx, step, (f) => f.checkpointId === cp.id);
  for (const v of cp.votes) {
    if (v.answer === 'approve' && v.reason?.trim()) {
      record(ctx, entryFor(step, 'approval', v.actor, v.at, v.reason, cp.id));
    }
  }
}

/**
 * Moves the words no attempt read yet that `pick` chooses to `to`'s next attempt: the run went
 * past the step they were kept for. Only guidance moves, unless `kinds` says more (a reason kept
 * for a step that will never run again, enterStep's passed-over steps).
 */
export function forwardNotes(
  ctx: DecideContext,
  to: StepState,
  pick: (f: FeedbackEntry) => boolean,
  kinds: readonly FeedbackEntry['kind'][] = ['guidance'],
): void {
  const forAttempt = to.attempt + 1;
  const entries = (ctx.state.feedback ?? []).flatMap((f, i) =>
    kinds.includes(f.kind) &&
    isUndelivered(ctx.state, f) &&
    pick(f) &&
    !(f.stepId === to.id && f.forAttempt === forAttempt)
      ? [i]
      : [],
  );
  if (entries.length > 0)
    ctx.emit({ type: 'feedbackForwarded', entries, stepId: to.id, forAttempt });
}

/**
 * Guidance, kept for the next attempt that runs: at an open checkpoint it waits for the decision
 * (kept for the step Request changes would run again, moved with an approval to the step that
 * runs next); otherwise it is for the current step's next attempt, and moves on with the run
 * when that step is not run again.
 */
export function decideGiveGuidance(ctx: DecideContext, c: GiveGuidanceCommand): void {
  if (!c.text.trim()) refuse('guidance needs some text', 'INVALID_INPUT');
  const { state } = ctx;
  const step = state.steps[state.cursor];
  if (step === undefined || state.workflow.steps[step.index] === undefined) {
    refuse(`run ${state.id} has no step to guide`, 'NOT_FOUND');
  }
  const cp = state.checkpoint;
  if (!cp) {
    record(ctx, entryFor(step, 'guidance', c.actor, c.at, c.text));
    return;
  }
  const gated = state.steps.find((s) => s.id === cp.stepId) ?? step;
  const kept =
    (cp.answers.includes('loop') ? changesTargetOf(state, gated, cp.when) : undefined) ??
    approvalTargetOf(state, cp) ??
    gated;
  record(ctx, entryFor(kept, 'guidance', c.actor, c.at, c.text, cp.id));
}
