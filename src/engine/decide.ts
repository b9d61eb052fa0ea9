/**
 * decide(): validates a command against a run's state and returns the events that record it and
 * the effects the caller must carry out, or a typed rejection. Pure: same input, same output.
 */
import type { Command } from './commands.ts';
import {
  decideAnswerCheckpoint,
  decideExpireCheckpoint,
  decideRecordDigest,
  decideReopenCheckpoint,
  decideRequestChanges,
} from './decide-checkpoint.ts';
import { CommandRejected, DecideContext, refuse } from './decide-context.ts';
import {
  decideCancel,
  decidePause,
  decideReset,
  decideResume,
  decideRetry,
  decideRevert,
  decideSkip,
  decideStart,
} from './decide-control.ts';
import { decideGiveGuidance } from './decide-feedback.ts';
import {
  decideChainCompleted,
  decideRecoverInterrupted,
  decideSessionInitialized,
  decideStepFailed,
  decideStepFinished,
  decideStepStarted,
  decideTriggerFinished,
} from './decide-steps.ts';
import type { Decision } from './events.ts';
import { layoutModule } from './layouts/index.ts';
import { isTerminal, type RunState } from './model.ts';
import { trackPhase } from './pabcd/decide-phase.ts';
import {
  decideTaskFailed,
  decideTaskFinished,
  decideTaskStarted,
  decideTasksPlanned,
} from './tasks/decide-tasks.ts';

export type { Decision, Effect, Rejection } from './events.ts';

/** Decides `command` against `state` (null only for 'start'). Never throws for a bad command. */
export function decide(state: RunState | null, command: Command): Decision {
  try {
    const ctx = run(state, command);
    return { ok: true, events: ctx.events, effects: ctx.effects };
  } catch (err) {
    if (err instanceof CommandRejected) return { ok: false, rejection: err.rejection };
    throw err;
  }
}

function run(state: RunState | null, command: Command): DecideContext {
  if (Number.isNaN(Date.parse(command.at))) {
    refuse(`command time "${command.at}" is not an ISO date`, 'INVALID_INPUT');
  }
  if (command.type === 'start') {
    if (state !== null) refuse(`run ${state.id} already exists`);
    const problem = layoutModule(command.layout)?.rules?.startProblem?.(command) ?? null;
    if (problem !== null) refuse(problem, 'INVALID_INPUT');
    const started = decideStart(command);
    trackPhase(started, command);
    return started;
  }
  if (state === null) refuse(`no such run (command ${command.type})`, 'NOT_FOUND');
  if (isTerminal(state.status)) refuse(`run ${state.id} is ${state.status}; nothing can change it`);
  if (state.blocked?.kind === 'corrupt') {
    refuse(`run ${state.id} is blocked: ${state.blocked.reason}; repair its ledger first`);
  }
  const ctx = new DecideContext(state, command);
  dispatch(ctx, command);
  trackPhase(ctx, command);
  const broken = layoutModule(state.layout)?.rules?.lawViolation?.(state, ctx.state) ?? null;
  if (broken !== null) refuse(broken);
  return ctx;
}

function dispatch(ctx: DecideContext, c: Exclude<Command, { type: 'start' }>): void {
  switch (c.type) {
    case 'stepStarted':
      decideStepStarted(ctx, c);
      break;
    case 'sessionInitialized':
      decideSessionInitialized(ctx, c);
      break;
    case 'chainCompleted':
      decideChainCompleted(ctx, c);
      break;
    case 'stepFinished':
      decideStepFinished(ctx, c);
      break;
    case 'stepFailed':
      decideStepFailed(ctx, c);
      break;
    case 'triggerFinished':
      decideTriggerFinished(ctx, c);
      break;
    case 'recoverInterrupted':
      decideRecoverInterrupted(ctx);
      break;
    case 'answerCheckpoint':
      decideAnswerCheckpoint(ctx, c);
      break;
    case 'requestChanges':
      decideRequestChanges(ctx, c);
      break;
    case 'recordCheckpointDigest':
      decideRecordDigest(ctx, c);
      break;
    case 'giveGuidance':
      decideGiveGuidance(ctx, c);
      break;
    case 'expireCheckpoint':
      decideExpireCheckpoint(ctx, c);
      break;
    case 'reopenCheckpoint':
      decideReopenCheckpoint(ctx, c);
      break;
    case 'skip':
      decideSkip(ctx, c);
      break;
    case 'pause':
      decidePause(ctx, c);
      break;
    case 'resume':
      decideResume(ctx);
      break;
    case 'retry':
      decideRetry(ctx);
      break;
    case 'cancel':
      decideCancel(ctx, c);
      break;
    case 'revert':
      decideRevert(ctx, c);
      break;
    case 'reset':
      decideReset(ctx, c);
      break;
    case 'tasksPlanned':
      decideTasksPlanned(ctx, c);
      break;
    case 'taskStarted':
      decideTaskStarted(ctx, c);
      break;
    case 'taskFinished':
      decideTaskFinished(ctx, c);
      break;
    case 'taskFailed':
      decideTaskFailed(ctx, c);
      break;
  }
}
