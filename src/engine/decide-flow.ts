/**
 * The moves decide rules share: enter a step (gate or queue), act on a directive, loop back,
 * open a checkpoint, cancel in-flight work, end the run. Each emits events into a DecideContext.
 */
import { checkpointAnswers, policyFor } from './checkpoint-policy.ts';
import type { DecideContext } from './decide-context.ts';
import { forwardNotes } from './decide-feedback.ts';
import type { Directive } from './directive.ts';
import type { QueueMode } from './events.ts';
import { layoutModule } from './layouts/index.ts';
import {
  type CheckpointKind,
  type CheckpointState,
  type FeedbackEntry,
  type StepState,
  stepIndex,
} from './model.ts';
import { changesTargetOf } from './note-destination.ts';
import { holdAtGate } from './pabcd/decide-phase.ts';
import type { GateName } from './pabcd/phases.ts';
import { cancelTasks, queueTasksStep } from './tasks/decide-tasks.ts';
import type { WorkflowStep } from './workflow/types.ts';

/** The workflow definition of the step at `index`. */
export function defOf(ctx: DecideContext, index: number): WorkflowStep {
  return ctx.state.workflow.steps[index]!;
}

function runsAgain(ctx: DecideContext, step: StepState): boolean {
  // A later step is only `skipped` when it was skipped ahead (loops and reverts reset it).
  if (step.excluded || step.status === 'skipped') return false;
  return !(defOf(ctx, step.index).executeOnce === true && step.status === 'completed');
}

/**
 * Makes the first runnable step at or after `index` current: its `before` gate opens, or its job
 * is queued. Excluded steps and completed executeOnce steps are passed over; past the last step
 * the run completes.
 */
export function enterStep(ctx: DecideContext, index: number): void {
  let i = index;
  while (i < ctx.state.steps.length && !runsAgain(ctx, ctx.state.steps[i]!)) i++;
  const step = ctx.state.steps[i];
  if (!step) {
    ctx.emit({ type: 'runCompleted', reason: 'all steps completed' });
    return;
  }
  // Notes kept for an earlier step that is not run again go to this one (never dropped).
  forwardNotes(ctx, step, (f) => stepIndex(ctx.state, f.stepId) < step.index);
  // So do the reasons kept for the steps passed over here: a Request changes whose loop goes
  // back to a completed executeOnce step reaches the step that runs in its place.
  if (i > index) {
    const passedOver = (f: FeedbackEntry) => {
      const at = stepIndex(ctx.state, f.stepId);
      return at >= index && at < i;
    };
    forwardNotes(ctx, step, passedOver, ['changes', 'approval']);
  }
  startStep(ctx, step, 'visit');
}

/** Queues the step (or opens its `before` gate when that is not yet approved for this visit). */
export function startStep(ctx: DecideContext, step: StepState, mode: QueueMode): void {
  if (defOf(ctx, step.index).checkpoint?.when === 'before' && !step.gatePassed) {
    openCheckpoint(ctx, step, 'before', `approve to start step ${step.id}`);
    return;
  }
  queueStep(ctx, step, mode, 0);
}

/** Queues a new attempt of the step and asks the caller to enqueue its job. */
export function queueStep(
  ctx: DecideContext,
  step: StepState,
  mode: QueueMode,
  delayMs: number,
): void {
  const def = defOf(ctx, step.index);
  if (def.tasks !== undefined) {
    queueTasksStep(ctx, step, mode, delayMs);
    return;
  }
  const attempt = step.attempt + 1;
  ctx.emit({ type: 'stepQueued', stepId: step.id, attempt, delayMs, mode });
  ctx.effect({
    type: 'enqueueStep',
    runId: ctx.state.id,
    stepId: step.id,
    attempt,
    agent: def.agent,
    prompt: def.prompt,
    delayMs,
    ...(def.timeoutMs !== undefined ? { timeoutMs: def.timeoutMs } : {}),
  });
}

/** The words of an `after` checkpoint: the layout's (a coordinator's plan), else the engine's. */
function afterReason(ctx: DecideContext, step: StepState): string {
  const ask = layoutModule(ctx.state.layout)?.rules?.afterCheckpointAsk?.(ctx.state, step);
  return ask ?? `step ${step.id} finished: approve to continue`;
}

/** The step is done and says `continue`: its `after` gate opens, or the next step is entered. */
export function continueAfter(ctx: DecideContext, step: StepState): void {
  if (holdAtGate(ctx, step)) return;
  if (defOf(ctx, step.index).checkpoint?.when === 'after') {
    openCheckpoint(ctx, step, 'after', afterReason(ctx, step));
    return;
  }
  enterStep(ctx, step.index + 1);
}

/** Acts on the directive of a step that just completed. */
export function followDirective(ctx: DecideContext, step: StepState, directive: Directive): void {
  const reason = directive.reason;
  switch (directive.action) {
    case 'continue':
      continueAfter(ctx, step);
      return;
    case 'loop':
      loopOrAsk(ctx, step, reason);
      return;
    case 'checkpoint':
      openCheckpoint(ctx, step, 'directive', reason ?? `step ${step.id} asks for a decision`);
      return;
    case 'trigger': {
      const agent = directive.triggerAgentId!;
      const allowed = ctx.state.workflow.subagents;
      if (allowed !== undefined && !allowed.includes(agent)) {
        // Declared subagents are the whole list (agent-config.json): anything else is refused.
        ctx.emit({
          type: 'runBlocked',
          kind: 'failure',
          reason: `step ${step.id} triggered agent ${agent}, which is not among the workflow's subagents (${allowed.join(', ')})`,
        });
        return;
      }
      queueTrigger(ctx, step, agent, reason ?? defOf(ctx, step.index).prompt);
      return;
    }
    case 'stop':
      ctx.emit({ type: 'runCompleted', reason: reason ?? `stopped early by step ${step.id}` });
      return;
    case 'error':
      ctx.emit({ type: 'runFailed', reason: reason ?? `step ${step.id} reported an error` });
      return;
    case 'pause':
      ctx.emit({
        type: 'runBlocked',
        kind: 'paused',
        reason: reason ?? `paused by step ${step.id}`,
      });
      return;
  }
}

/**
 * Loops back when the step's counter allows; at the limit a 'loop-limit' checkpoint asks a human
 * instead, so counters never exceed max. A step without `loop` cannot loop: the run blocks.
 */
export function loopOrAsk(ctx: DecideContext, step: StepState, reason?: string): void {
  const loop = defOf(ctx, step.index).loop;
  if (!loop) {
    ctx.emit({
      type: 'runBlocked',
      kind: 'failure',
      reason: `step ${step.id} asked to loop but declares no loop: retry or skip`,
    });
    return;
  }
  const counter = ctx.state.loopCounters[step.id] ?? 0;
  if (counter >= loop.max) {
    const why = `step ${step.id} reached its loop limit (${loop.max}) and asks to go back to ${loop.backTo} again${reason ? ` (${reason})` : ''}: approve to continue, reject to fail the run`;
    openCheckpoint(ctx, step, 'loop-limit', why);
    return;
  }
  loopBack(ctx, step, reason);
}

/**
 * Goes back to `toStepId` (default: the step's `loop.backTo`), counting the loop on `step`.
 * Caller checked the counter.
 */
export function loopBack(
  ctx: DecideContext,
  step: StepState,
  reason?: string,
  toStepId: string = defOf(ctx, step.index).loop!.backTo,
): void {
  const counter = (ctx.state.loopCounters[step.id] ?? 0) + 1;
  ctx.emit({
    type: 'loopedBack',
    fromStepId: step.id,
    toStepId,
    counter,
    ...(reason !== undefined ? { reason } : {}),
  });
  const target = ctx.state.steps.findIndex((s) => s.id === toStepId);
  enterStep(ctx, target);
}

/**
 * Where Request changes at a checkpoint of `step` sends the run: the step's `loop.backTo`; else
 * the step itself once it ran, or the runnable step before it at a `before` gate.
 */
export function changesTarget(
  ctx: DecideContext,
  step: StepState,
  kind: CheckpointKind,
): StepState | undefined {
  return changesTargetOf(ctx.state, step, kind);
}

/** Opens a checkpoint on the step; schedules its expiry when the policy has one. */
export function openCheckpoint(
  ctx: DecideContext,
  step: StepState,
  when: CheckpointKind,
  reason: string,
  gate?: GateName,
): void {
  const def = defOf(ctx, step.index);
  const policy = policyFor(def.checkpoint);
  const n =
    ctx.state.checkpoints.filter((c) => c.stepId === step.id).length +
    (ctx.state.checkpoint?.stepId === step.id ? 1 : 0) +
    1;
  const checkpoint: CheckpointState = {
    id: `${step.id}:${n}`,
    stepId: step.id,
    when,
    reason,
    answers: checkpointAnswers(
      when,
      def,
      changesTarget(ctx, step, when) !== undefined,
      gate !== undefined,
    ),
    policy,
    openedAt: ctx.at,
    votes: [],
    ...(gate !== undefined && { gate }),
  };
  if (policy.expiresInMs !== undefined) {
    checkpoint.expiresAt = new Date(Date.parse(ctx.at) + policy.expiresInMs).toISOString();
  }
  ctx.emit({ type: 'checkpointOpened', checkpoint });
  if (checkpoint.expiresAt) {
    ctx.effect({
      type: 'scheduleExpiry',
      runId: ctx.state.id,
      checkpointId: checkpoint.id,
      at: checkpoint.expiresAt,
    });
  }
}

/** Queues the sub-agent of a `trigger` directive; the run continues when it finishes. */
export function queueTrigger(
  ctx: DecideContext,
  step: StepState,
  agent: string,
  prompt: string,
): void {
  const attempt = (ctx.state.steps[step.index]!.triggerAttempt ?? 0) + 1;
  ctx.emit({ type: 'triggerQueued', stepId: step.id, agent, prompt, attempt });
  ctx.effect({
    type: 'enqueueTrigger',
    runId: ctx.state.id,
    stepId: step.id,
    attempt,
    agent,
    prompt,
  });
}

/** Cancels the current step's in-flight attempt, if any (its late result is then stale). */
export function cancelInFlight(ctx: DecideContext, reason: string): void {
  const step = ctx.state.steps[ctx.state.cursor];
  if (!step || (step.status !== 'queued' && step.status !== 'running')) return;
  if (defOf(ctx, step.index).tasks !== undefined) {
    // A tasks step has no job of its own: its tasks' jobs are what runs.
    cancelTasks(ctx, step.id, reason);
    ctx.emit({ type: 'stepCancelled', stepId: step.id, attempt: step.attempt, reason });
    return;
  }
  ctx.emit({ type: 'stepCancelled', stepId: step.id, attempt: step.attempt, reason });
  ctx.effect({ type: 'cancelStep', runId: ctx.state.id, stepId: step.id, attempt: step.attempt });
}

/** Closes the open checkpoint without a decision, if there is one. */
export function withdrawCheckpoint(ctx: DecideContext, reason: string): void {
  const cp = ctx.state.checkpoint;
  if (cp) ctx.emit({ type: 'checkpointWithdrawn', checkpointId: cp.id, reason });
}

/** Makes a blocked run active again. */
export function unblock(ctx: DecideContext): void {
  if (ctx.state.status === 'blocked') ctx.emit({ type: 'runResumed', by: ctx.actor });
}
