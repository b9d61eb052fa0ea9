/**
 * Reviewers' words as ledger facts: the reason of a Request changes, the reasons given with an
 * approval (for the step that runs next) and guidance replies. Each becomes a `feedbackRecorded`
 * event naming the step and the first attempt that receives it; the orchestrator hands it to that
 * attempt's agent (prompt section, feedback file, resumed session).
 */
import type { GiveGuidanceCommand } from './commands.ts';
import { type DecideContext, refuse } from './decide-context.ts';
import { defOf } from './decide-flow.ts';
import type { Actor, CheckpointState, FeedbackEntry, StepState } from './model.ts';

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

/** The step an approval's reasons are for: the gated step, or the next one that will run. */
function nextStepOf(ctx: DecideContext, cp: CheckpointState): StepState | undefined {
  const steps = ctx.state.steps;
  const at = steps.findIndex((s) => s.id === cp.stepId);
  if (cp.when === 'before') return steps[at];
  return steps.slice(at + 1).find((s) => !s.excluded && s.status !== 'skipped');
}

/** Every approving vote's reason, for the step the approval lets run. */
export function recordApprovalReasons(ctx: DecideContext, cp: CheckpointState): void {
  const step = nextStepOf(ctx, cp);
  if (step === undefined) return;
  for (const v of cp.votes) {
    if (v.answer === 'approve' && v.reason?.trim()) {
      record(ctx, entryFor(step, 'approval', v.actor, v.at, v.reason, cp.id));
    }
  }
}

/** Guidance for the run's current step: its next attempt receives it. */
export function decideGiveGuidance(ctx: DecideContext, c: GiveGuidanceCommand): void {
  if (!c.text.trim()) refuse('guidance needs some text', 'INVALID_INPUT');
  const step = ctx.state.steps[ctx.state.cursor];
  if (step === undefined || defOf(ctx, step.index) === undefined) {
    refuse(`run ${ctx.state.id} has no step to guide`, 'NOT_FOUND');
  }
  record(ctx, entryFor(step, 'guidance', c.actor, c.at, c.text));
}
