/**
 * Decide rules for what humans do to a run as a whole: start, skip, pause, resume, retry,
 * cancel, revert and reset (the last two also from hand edits of a layout's files).
 */
import type {
  CancelCommand,
  PauseCommand,
  ResetCommand,
  RevertCommand,
  SkipCommand,
  StartCommand,
} from './commands.ts';
import { DecideContext, refuse, who } from './decide-context.ts';
import {
  cancelInFlight,
  continueAfter,
  enterStep,
  queueStep,
  queueTrigger,
  startStep,
  unblock,
  withdrawCheckpoint,
} from './decide-flow.ts';
import type { RunStartedEvent } from './events.ts';
import { evolve } from './evolve.ts';
import { RUN_ID_PATTERN, type RunState, stepApplies } from './model.ts';

/** Validates a start command and lays out the run; its first step is entered at once. */
export function decideStart(c: StartCommand): DecideContext {
  const wf = c.workflow;
  const track = c.selectedTrack;
  const conditions = c.selectedConditions ?? [];
  if (!RUN_ID_PATTERN.test(c.runId)) {
    refuse(`run id "${c.runId}" must match ${RUN_ID_PATTERN.source}`, 'INVALID_INPUT');
  }
  if (wf.steps.length === 0) refuse(`workflow ${wf.id} has no steps`, 'INVALID_INPUT');
  checkShape(wf);
  if (track !== undefined && !(wf.tracks ?? []).includes(track)) {
    refuse(`unknown track "${track}" (workflow ${wf.id} has: ${list(wf.tracks)})`, 'INVALID_INPUT');
  }
  const unknown = conditions.filter((x) => !(wf.conditions ?? []).includes(x));
  if (unknown.length > 0) {
    const msg = `unknown condition(s) ${unknown.join(', ')} (workflow ${wf.id} has: ${list(wf.conditions)})`;
    refuse(msg, 'INVALID_INPUT');
  }
  if (!wf.steps.some((s) => stepApplies(s, track, conditions))) {
    refuse(
      `no step of workflow ${wf.id} applies to the selected track/conditions`,
      'INVALID_INPUT',
    );
  }
  const started: RunStartedEvent = {
    type: 'runStarted',
    at: c.at,
    runId: c.runId,
    workflow: wf,
    workspace: c.workspace,
    layout: c.layout,
    spec: c.spec,
    ...(c.inputs !== undefined && c.inputs.length > 0 ? { inputs: structuredClone(c.inputs) } : {}),
    startedBy: c.actor,
    selectedConditions: [...conditions],
    resumeFromLastStep: c.resumeFromLastStep ?? true,
    ...(track !== undefined ? { selectedTrack: track } : {}),
  };
  const ctx = new DecideContext(evolve(null, started), c, [started]);
  enterStep(ctx, 0);
  return ctx;
}

/** Workflows from files were validated; this guards hand-built ones the run could not follow. */
function checkShape(wf: StartCommand['workflow']): void {
  const ids = wf.steps.map((s) => s.id);
  wf.steps.forEach((s, i) => {
    if (ids.indexOf(s.id) !== i)
      refuse(`workflow ${wf.id}: duplicate step id ${s.id}`, 'INVALID_INPUT');
    if (s.loop && !ids.slice(0, i).includes(s.loop.backTo)) {
      refuse(
        `workflow ${wf.id}: step ${s.id} loops back to ${s.loop.backTo}, not an earlier step`,
        'INVALID_INPUT',
      );
    }
  });
}

function list(values: readonly string[] | undefined): string {
  return values && values.length > 0 ? values.join(', ') : 'none';
}

function notAwaiting(state: RunState, what: string): void {
  if (state.status === 'awaiting') {
    refuse(
      `run ${state.id} is awaiting checkpoint ${state.checkpoint?.id}: answer it (or cancel) before you ${what}`,
    );
  }
}

/** CodeMachine Ctrl+S: the current step is marked skipped and the run moves on. */
export function decideSkip(ctx: DecideContext, c: SkipCommand): void {
  const { state } = ctx;
  if (c.ahead === true && c.stepId !== state.steps[state.cursor]?.id) {
    skipAhead(ctx, c);
    return;
  }
  notAwaiting(state, 'skip');
  const step = state.steps[state.cursor]!;
  if (c.stepId !== undefined && c.stepId !== step.id) {
    refuse(`step ${c.stepId} is not the current step (it is ${step.id})`);
  }
  cancelInFlight(ctx, `skipped by ${who(c.actor)}`);
  unblock(ctx);
  const reason = c.reason ?? `skipped by ${who(c.actor)}`;
  ctx.emit({ type: 'stepSkipped', stepId: step.id, reason, by: c.actor });
  enterStep(ctx, step.index + 1);
}

/** Marks a later, unstarted step skipped; enterStep passes over it when the run gets there. */
function skipAhead(ctx: DecideContext, c: SkipCommand): void {
  const { state } = ctx;
  const step = state.steps.find((s) => s.id === c.stepId);
  if (step === undefined) refuse(`run ${state.id} has no step ${c.stepId}`, 'NOT_FOUND');
  if (step.index < state.cursor || step.status !== 'pending' || step.excluded) {
    refuse(`step ${step.id} cannot be skipped ahead: it is not a later step still to run`);
  }
  const reason = c.reason ?? `skipped ahead by ${who(c.actor)}`;
  ctx.emit({ type: 'stepSkipped', stepId: step.id, reason, by: c.actor });
}

/** Stops work now: the in-flight attempt is cancelled and the run waits for resume. */
export function decidePause(ctx: DecideContext, c: PauseCommand): void {
  const { state } = ctx;
  notAwaiting(state, 'pause');
  if (state.status === 'blocked') {
    refuse(`run ${state.id} is already blocked (${state.blocked?.kind}): ${state.blocked?.reason}`);
  }
  cancelInFlight(ctx, `paused by ${who(c.actor)}`);
  const reason = `paused by ${who(c.actor)}${c.reason ? `: ${c.reason}` : ''}`;
  ctx.emit({ type: 'runBlocked', kind: 'paused', reason });
}

/** Continues a paused or interrupted run where it stood. */
export function decideResume(ctx: DecideContext): void {
  const { state } = ctx;
  const kind = state.blocked?.kind;
  if (state.status !== 'blocked') refuse(`run ${state.id} is ${state.status}, not paused`);
  if (kind !== 'paused' && kind !== 'interrupted') {
    refuse(`run ${state.id} is blocked by a ${kind}: use retry or skip`);
  }
  unblock(ctx);
  carryOn(ctx);
}

/** Runs the failed (or interrupted) step, or failed trigger, again as a new attempt. */
export function decideRetry(ctx: DecideContext): void {
  const { state } = ctx;
  const kind = state.blocked?.kind;
  if (state.status !== 'blocked') refuse(`run ${state.id} is ${state.status}: nothing to retry`);
  if (kind === 'paused') refuse(`run ${state.id} is paused: use resume`);
  unblock(ctx);
  const step = ctx.state.steps[ctx.state.cursor]!;
  const t = ctx.state.trigger;
  if (t) queueTrigger(ctx, step, t.agent, t.prompt);
  else queueStep(ctx, step, 'retry', 0);
}

/**
 * Picks up after a pause: a pending trigger is queued again; a step that already completed (the
 * `pause` directive) continues past it; any other step runs again as a new attempt.
 */
function carryOn(ctx: DecideContext): void {
  const step = ctx.state.steps[ctx.state.cursor]!;
  const t = ctx.state.trigger;
  if (t) queueTrigger(ctx, step, t.agent, t.prompt);
  else if (step.status === 'completed' || step.status === 'skipped') continueAfter(ctx, step);
  else startStep(ctx, step, 'resume');
}

/** Ends the run as cancelled; in-flight work is cancelled and an open checkpoint withdrawn. */
export function decideCancel(ctx: DecideContext, c: CancelCommand): void {
  cancelInFlight(ctx, `run cancelled by ${who(c.actor)}`);
  withdrawCheckpoint(ctx, `run cancelled by ${who(c.actor)}`);
  const reason = `cancelled by ${who(c.actor)}${c.reason ? `: ${c.reason}` : ''}`;
  ctx.emit({ type: 'runCancelled', reason, by: c.actor });
}

/** Goes back to an earlier (or the current) step: it and every later step run again. */
export function decideRevert(ctx: DecideContext, c: RevertCommand): void {
  const { state } = ctx;
  const target = state.steps.find((s) => s.id === c.toStepId);
  if (!target) refuse(`run ${state.id} has no step ${c.toStepId}`, 'NOT_FOUND');
  if (target.excluded) {
    refuse(`step ${target.id} is not in the selected track/conditions`, 'INVALID_INPUT');
  }
  if (target.index > state.cursor) {
    const current = state.steps[state.cursor]!.id;
    refuse(`revert goes back only: step ${target.id} comes after the current step ${current}`);
  }
  rewind(ctx, `run reverted to step ${target.id} by ${who(c.actor)}`);
  ctx.emit({ type: 'reverted', toStepId: target.id, source: c.source, by: c.actor });
  unblock(ctx);
  enterStep(ctx, target.index);
}

/** Starts the run over from its first step; loop counters start at zero again. */
export function decideReset(ctx: DecideContext, c: ResetCommand): void {
  rewind(ctx, `run reset by ${who(c.actor)}`);
  ctx.emit({ type: 'runReset', source: c.source, by: c.actor });
  unblock(ctx);
  enterStep(ctx, 0);
}

function rewind(ctx: DecideContext, reason: string): void {
  cancelInFlight(ctx, reason);
  withdrawCheckpoint(ctx, reason);
}
