/**
 * Decide rules for what workers report about steps: started, session, chains, finished, failed,
 * trigger finished, and crash recovery. A report about anything but the current in-flight attempt
 * is stale and refused, so a duplicate worker result never applies twice.
 */
import type {
  ChainCompletedCommand,
  SessionInitializedCommand,
  StepFailedCommand,
  StepFinishedCommand,
  StepStartedCommand,
  TriggerFinishedCommand,
} from './commands.ts';
import { type DecideContext, refuse } from './decide-context.ts';
import { continueAfter, defOf, followDirective, queueStep } from './decide-flow.ts';
import type { StepState, StepStatus, Telemetry } from './model.ts';
import { findStep, ZERO_TELEMETRY } from './model.ts';

/** The step a worker report is about, when it is the current step in one of `statuses`. */
function inFlight(
  ctx: DecideContext,
  stepId: string,
  attempt: number | undefined,
  statuses: readonly StepStatus[],
): StepState {
  const { state } = ctx;
  const step = findStep(state, stepId);
  if (!step) refuse(`run ${state.id} has no step ${stepId}`, 'NOT_FOUND');
  if (state.status !== 'active') {
    refuse(`stale report for step ${stepId}: run ${state.id} is ${state.status}`);
  }
  if (step.index !== state.cursor || !statuses.includes(step.status)) {
    refuse(
      `stale report for step ${stepId}: the step is ${step.status}, not ${statuses.join('/')}`,
    );
  }
  if (attempt !== undefined && attempt !== step.attempt) {
    refuse(
      `stale report for step ${stepId}: attempt ${attempt} is not the current attempt ${step.attempt}`,
    );
  }
  return step;
}

function checkTelemetry(t: Telemetry): void {
  const values = [t.tokensIn, t.tokensOut, t.cachedTokens, t.costUsd];
  if (!values.every((v) => Number.isFinite(v) && v >= 0)) {
    refuse('telemetry values must be finite numbers >= 0', 'INVALID_INPUT');
  }
}

/** A worker picked up the queued attempt. */
export function decideStepStarted(ctx: DecideContext, c: StepStartedCommand): void {
  inFlight(ctx, c.stepId, c.attempt, ['queued']);
  ctx.emit({ type: 'stepStarted', stepId: c.stepId, attempt: c.attempt });
}

/** The agent's session id and registry id are known. */
export function decideSessionInitialized(ctx: DecideContext, c: SessionInitializedCommand): void {
  inFlight(ctx, c.stepId, undefined, ['running']);
  if (!Number.isInteger(c.monitoringId) || c.monitoringId < 0 || c.sessionId === '') {
    refuse('sessionId must be non-empty and monitoringId an integer >= 0', 'INVALID_INPUT');
  }
  ctx.emit({
    type: 'sessionInitialized',
    stepId: c.stepId,
    sessionId: c.sessionId,
    monitoringId: c.monitoringId,
  });
}

/** One chained prompt completed; each index counts once per visit. */
export function decideChainCompleted(ctx: DecideContext, c: ChainCompletedCommand): void {
  const step = inFlight(ctx, c.stepId, undefined, ['running']);
  if (!Number.isInteger(c.chainIndex) || c.chainIndex < 0) {
    refuse('chainIndex must be an integer >= 0', 'INVALID_INPUT');
  }
  if (step.completedChains.includes(c.chainIndex)) {
    refuse(`chain ${c.chainIndex} of step ${c.stepId} is already completed`);
  }
  ctx.emit({ type: 'chainCompleted', stepId: c.stepId, chainIndex: c.chainIndex });
}

/** The agent exited: exit 0 applies its directive; any other exit code is a failed attempt. */
export function decideStepFinished(ctx: DecideContext, c: StepFinishedCommand): void {
  const step = inFlight(ctx, c.stepId, c.attempt, ['queued', 'running']);
  checkTelemetry(c.telemetry);
  if (c.exitCode !== 0) {
    failAttempt(ctx, step, `agent exited with code ${c.exitCode}`, c.telemetry);
    return;
  }
  const { stepId, attempt, exitCode, directive, telemetry } = c;
  ctx.emit({ type: 'stepCompleted', stepId, attempt, exitCode, directive, telemetry });
  followDirective(ctx, ctx.state.steps[step.index]!, directive);
}

/** The attempt failed before or while running. */
export function decideStepFailed(ctx: DecideContext, c: StepFailedCommand): void {
  const step = inFlight(ctx, c.stepId, c.attempt, ['queued', 'running']);
  const telemetry = c.telemetry ?? { ...ZERO_TELEMETRY };
  checkTelemetry(telemetry);
  failAttempt(ctx, step, c.error, telemetry);
}

/**
 * Retries while tries <= retries.count, after backoff * 2^(tries-1) ms; then the run blocks
 * ('retries-exhausted', or 'failure' when the step allows no retries).
 */
function failAttempt(ctx: DecideContext, step: StepState, error: string, telemetry: Telemetry) {
  const retries = defOf(ctx, step.index).retries;
  const base = { type: 'stepFailed', stepId: step.id, attempt: step.attempt, error, telemetry };
  if (retries && step.tries <= retries.count) {
    const delayMs = retries.backoffMs * 2 ** (step.tries - 1);
    ctx.emit({ ...base, type: 'stepFailed', retryInMs: delayMs });
    queueStep(ctx, ctx.state.steps[step.index]!, 'auto-retry', delayMs);
    return;
  }
  ctx.emit({ ...base, type: 'stepFailed' });
  const exhausted = retries !== undefined && retries.count > 0;
  ctx.emit({
    type: 'runBlocked',
    kind: exhausted ? 'retries-exhausted' : 'failure',
    reason: exhausted
      ? `step ${step.id} failed after ${step.tries} attempts: ${error}`
      : `step ${step.id} failed: ${error}`,
  });
}

/** The trigger sub-agent exited: on success the step continues, else the run blocks. */
export function decideTriggerFinished(ctx: DecideContext, c: TriggerFinishedCommand): void {
  const { state } = ctx;
  const t = state.trigger;
  if (state.status !== 'active' || !t || t.status !== 'queued') {
    refuse(`stale trigger report for step ${c.stepId}: run ${state.id} awaits no trigger`);
  }
  if (t.stepId !== c.stepId || t.attempt !== c.attempt) {
    refuse(`stale trigger report: awaiting ${t.stepId} attempt ${t.attempt}`);
  }
  const telemetry = c.telemetry ?? { ...ZERO_TELEMETRY };
  checkTelemetry(telemetry);
  const error = c.error ?? (c.exitCode !== 0 ? `agent exited with code ${c.exitCode}` : undefined);
  ctx.emit({
    type: 'triggerFinished',
    stepId: c.stepId,
    attempt: c.attempt,
    exitCode: c.exitCode,
    telemetry,
    ...(error !== undefined ? { error } : {}),
  });
  const step = findStep(ctx.state, c.stepId)!;
  if (error === undefined) {
    continueAfter(ctx, step);
    return;
  }
  ctx.emit({
    type: 'runBlocked',
    kind: 'failure',
    reason: `trigger agent ${t.agent} of step ${t.stepId} failed: ${error}`,
  });
}

/**
 * At start-up, a step was in flight when the process died: with resumeFromLastStep it runs again
 * as a new attempt (same session), otherwise the run blocks for a human.
 */
export function decideRecoverInterrupted(ctx: DecideContext): void {
  const { state } = ctx;
  const step = state.steps[state.cursor];
  const inFlightNow =
    state.status === 'active' && step && (step.status === 'queued' || step.status === 'running');
  if (!inFlightNow) refuse(`nothing was interrupted: run ${state.id} has no step in flight`);
  ctx.emit({ type: 'stepInterrupted', stepId: step.id, attempt: step.attempt });
  if (state.resumeFromLastStep) {
    queueStep(ctx, ctx.state.steps[step.index]!, 'resume', 0);
    return;
  }
  ctx.emit({
    type: 'runBlocked',
    kind: 'interrupted',
    reason: `interrupted during step ${step.id}: resume or retry`,
  });
}
