/**
 * evolve(): folds one event into a run's state. Pure: it never mutates its input and builds new
 * objects only along the changed path. Optional fields are omitted rather than set to undefined,
 * so a state survives a JSON round trip unchanged (replay equals the stored projection).
 */
import { CorruptStateError } from '../errors.ts';
import type { QueueMode, RunEvent } from './events.ts';
import { layoutModule } from './layouts/index.ts';
import {
  addTelemetry,
  type CheckpointState,
  type FeedbackEntry,
  type RunState,
  type StepState,
  stepApplies,
  stepIndex,
  ZERO_TELEMETRY,
} from './model.ts';
import { foldMove, foldStopBlock, type PabcdState } from './pabcd/phases.ts';
import { applyTaskEvent, tasksAfterInterrupt, tasksForRetry } from './tasks/evolve-tasks.ts';

/** Folds `event` into `state` (null before `runStarted`); throws CorruptStateError on nonsense. */
export function evolve(state: RunState | null, event: RunEvent): RunState {
  if (event.type === 'runStarted') {
    if (state !== null) throw new CorruptStateError(`run ${state.id}: second runStarted event`);
    return startState(event);
  }
  if (state === null) throw new CorruptStateError(`event ${event.type} before runStarted`);
  const next = apply(state, event);
  return { ...next, seq: state.seq + 1, updatedAt: event.at };
}

/** Folds a whole event log; null when it is empty. */
export function replay(events: readonly RunEvent[]): RunState | null {
  let state: RunState | null = null;
  for (const event of events) state = evolve(state, event);
  return state;
}

function startState(e: Extract<RunEvent, { type: 'runStarted' }>): RunState {
  const steps: StepState[] = e.workflow.steps.map((s, index) => {
    const step: StepState = {
      id: s.id,
      index,
      agent: s.agent,
      status: 'pending',
      attempt: 0,
      tries: 0,
      completedChains: [],
      telemetry: { ...ZERO_TELEMETRY },
    };
    if (!stepApplies(s, e.selectedTrack, e.selectedConditions)) {
      step.status = 'skipped';
      step.excluded = true;
    }
    return step;
  });
  const state: RunState = {
    id: e.runId,
    seq: 1,
    workflow: e.workflow,
    workspace: e.workspace,
    layout: e.layout,
    status: 'active',
    spec: e.spec,
    startedBy: e.startedBy,
    createdAt: e.at,
    updatedAt: e.at,
    selectedConditions: [...e.selectedConditions],
    resumeFromLastStep: e.resumeFromLastStep,
    steps,
    cursor: 0,
    loopCounters: {},
    checkpoint: null,
    checkpoints: [],
  };
  if (e.selectedTrack !== undefined) state.selectedTrack = e.selectedTrack;
  if (e.inputs !== undefined) state.inputs = structuredClone(e.inputs);
  // A layout's own fields (codexclaw's PABCD phase, src/engine/pabcd/), after the engine's.
  const own = layoutModule(e.layout)?.rules?.initialFields?.(e);
  if (own !== undefined) Object.assign(state, own);
  return state;
}

/**
 * Returns a copy of `obj` without the listed keys (so no key is left holding undefined). Built
 * key by key, never with `delete`: that turns an object into a slow dictionary, and a long run's
 * thousands of steps would make every scan over them (and so every commit) crawl.
 */
function without<T extends object, K extends keyof T>(obj: T, ...keys: K[]): Omit<T, K> {
  const copy: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(obj)) {
    if (!keys.includes(k as K)) copy[k] = v;
  }
  return copy as Omit<T, K>;
}

/** A step as it is before a new visit: its attempt counters and spend are kept. */
function freshVisit(step: StepState): StepState {
  if (step.excluded) return step;
  const kept: StepState = {
    id: step.id,
    index: step.index,
    agent: step.agent,
    status: 'pending',
    attempt: step.attempt,
    tries: 0,
    completedChains: [],
    telemetry: step.telemetry,
  };
  if (step.triggerAttempt !== undefined) kept.triggerAttempt = step.triggerAttempt;
  // Kept so feedback can resume the agent's own session on the next visit.
  const session = step.sessionId ?? step.previousSessionId;
  if (session !== undefined) kept.previousSessionId = session;
  return kept;
}

function keepGate(fresh: StepState, before: StepState): StepState {
  return before.gatePassed ? { ...fresh, gatePassed: true } : fresh;
}

function indexOf(state: RunState, stepId: string): number {
  const i = stepIndex(state, stepId);
  if (i < 0) throw new CorruptStateError(`run ${state.id}: event names unknown step ${stepId}`);
  return i;
}

function updateStep(state: RunState, stepId: string, f: (s: StepState) => StepState): RunState {
  const i = indexOf(state, stepId);
  const steps = state.steps.slice();
  steps[i] = f(steps[i]!);
  return { ...state, steps };
}

function openCheckpoint(state: RunState, id: string): CheckpointState {
  if (state.checkpoint === null || state.checkpoint.id !== id) {
    throw new CorruptStateError(`run ${state.id}: event names checkpoint ${id}, which is not open`);
  }
  return state.checkpoint;
}

/** Moves the open checkpoint to the history; the run stops awaiting. */
function closeCheckpoint(state: RunState, closed: CheckpointState): RunState {
  return {
    ...state,
    checkpoint: null,
    checkpoints: [...state.checkpoints, closed],
    status: state.status === 'awaiting' ? 'active' : state.status,
  };
}

/** Tries of a step once queued, by queue mode (retries are counted against tries). */
const NEXT_TRIES: Record<QueueMode, (tries: number) => number> = {
  visit: () => 1,
  retry: () => 1,
  'auto-retry': (tries) => tries + 1,
  resume: (tries) => Math.max(1, tries),
};

function apply(state: RunState, e: Exclude<RunEvent, { type: 'runStarted' }>): RunState {
  switch (e.type) {
    case 'stepQueued': {
      const next = updateStep(state, e.stepId, (s) => {
        // A new visit keeps an approved `before` gate: the approval is what queued it.
        let base = e.mode === 'visit' ? keepGate(freshVisit(s), s) : s;
        if (e.mode === 'retry' && base.tasks) base = { ...base, tasks: tasksForRetry(base.tasks) };
        const tries = NEXT_TRIES[e.mode](s.tries);
        return without(
          { ...base, status: 'queued' as const, attempt: e.attempt, tries },
          'startedAt',
          'finishedAt',
          'exitCode',
          'error',
          'directive',
        );
      });
      return { ...next, cursor: indexOf(state, e.stepId) };
    }
    case 'stepStarted':
      return updateStep(state, e.stepId, (s) => ({ ...s, status: 'running', startedAt: e.at }));
    case 'sessionInitialized':
      return updateStep(state, e.stepId, (s) => ({
        ...s,
        sessionId: e.sessionId,
        monitoringId: e.monitoringId,
      }));
    case 'chainCompleted':
      return updateStep(state, e.stepId, (s) => ({
        ...s,
        completedChains: [...s.completedChains, e.chainIndex].sort((a, b) => a - b),
      }));
    case 'stepCompleted':
      return updateStep(state, e.stepId, (s) => ({
        ...without(s, 'error'),
        status: 'completed',
        finishedAt: e.at,
        exitCode: e.exitCode,
        directive: e.directive,
        telemetry: addTelemetry(s.telemetry, e.telemetry),
      }));
    case 'stepFailed':
      return updateStep(state, e.stepId, (s) => ({
        ...s,
        status: 'failed',
        finishedAt: e.at,
        error: e.error,
        telemetry: addTelemetry(s.telemetry, e.telemetry),
      }));
    case 'stepSkipped': {
      const next = updateStep(state, e.stepId, (s) => ({
        ...s,
        status: 'skipped',
        finishedAt: e.at,
      }));
      return next.trigger?.stepId === e.stepId ? without(next, 'trigger') : next;
    }
    case 'stepCancelled':
      return updateStep(state, e.stepId, (s) => ({ ...s, status: 'pending' }));
    case 'stepInterrupted':
      return updateStep(state, e.stepId, (s) => ({
        ...s,
        status: 'failed',
        error: 'interrupted',
        ...(s.tasks ? { tasks: tasksAfterInterrupt(s.tasks) } : {}),
      }));
    case 'loopedBack': {
      const to = indexOf(state, e.toStepId);
      const from = indexOf(state, e.fromStepId);
      const onceDone = (s: StepState) =>
        state.workflow.steps[s.index]?.executeOnce === true && s.status === 'completed';
      const steps = state.steps.map((s) =>
        s.index >= to && s.index <= from && !onceDone(s) ? freshVisit(s) : s,
      );
      return {
        ...state,
        steps,
        cursor: to,
        loopCounters: { ...state.loopCounters, [e.fromStepId]: e.counter },
      };
    }
    case 'reverted':
      return rewind(state, indexOf(state, e.toStepId));
    case 'runReset':
      return rewind(state, 0);
    case 'checkpointOpened': {
      const next: RunState = { ...state, checkpoint: e.checkpoint, status: 'awaiting' };
      return e.checkpoint.when === 'before'
        ? { ...next, cursor: indexOf(state, e.checkpoint.stepId) }
        : next;
    }
    case 'checkpointVoted': {
      const cp = openCheckpoint(state, e.checkpointId);
      return { ...state, checkpoint: { ...cp, votes: [...cp.votes, e.vote] } };
    }
    case 'checkpointResolved': {
      const cp = openCheckpoint(state, e.checkpointId);
      const next = closeCheckpoint(state, { ...cp, decision: e.decision });
      return cp.when === 'before' && e.decision.answer === 'approve'
        ? updateStep(next, cp.stepId, (s) => ({ ...s, gatePassed: true }))
        : next;
    }
    case 'checkpointDigestRecorded': {
      const cp = openCheckpoint(state, e.checkpointId);
      if (e.previous === undefined) {
        return { ...state, checkpoint: { ...cp, digest: e.digest, digestLabel: e.label } };
      }
      const changed = e.change ?? 'the content changed';
      const next = { ...cp, digest: e.digest, digestLabel: e.label, votes: [] };
      return { ...state, checkpoint: { ...next, contentChanged: changed } };
    }
    case 'checkpointExpired': {
      const cp = openCheckpoint(state, e.checkpointId);
      return { ...state, checkpoint: { ...cp, expiredAt: e.at } };
    }
    case 'checkpointWithdrawn': {
      const cp = openCheckpoint(state, e.checkpointId);
      return closeCheckpoint(state, { ...cp, withdrawn: { at: e.at, reason: e.reason } });
    }
    case 'triggerQueued': {
      const next = updateStep(state, e.stepId, (s) => ({ ...s, triggerAttempt: e.attempt }));
      const trigger = { stepId: e.stepId, agent: e.agent, prompt: e.prompt, attempt: e.attempt };
      return { ...next, trigger: { ...trigger, status: 'queued' } };
    }
    case 'triggerFinished': {
      const next = updateStep(state, e.stepId, (s) => ({
        ...s,
        telemetry: addTelemetry(s.telemetry, e.telemetry),
      }));
      if (e.error === undefined) return without(next, 'trigger');
      if (!next.trigger) throw new CorruptStateError(`run ${state.id}: no trigger to finish`);
      return { ...next, trigger: { ...next.trigger, status: 'failed', error: e.error } };
    }
    case 'runBlocked':
      return { ...state, status: 'blocked', blocked: { kind: e.kind, reason: e.reason } };
    case 'runResumed':
      return { ...without(state, 'blocked'), status: 'active' };
    case 'runCompleted':
      return ended(state, 'completed', e.reason, e.by);
    case 'runFailed':
      return ended(state, 'failed', e.reason, e.by);
    case 'runCancelled':
      return ended(state, 'cancelled', e.reason, e.by);
    case 'phaseMoved':
      return { ...state, pabcd: foldMove(pabcdOf(state), { ...e.move, at: e.at }) };
    case 'phaseStopBlocked':
      return { ...state, pabcd: foldStopBlock(pabcdOf(state), e.at) };
    case 'feedbackRecorded':
      return { ...state, feedback: [...(state.feedback ?? []), e.entry] };
    case 'feedbackForwarded':
      return { ...state, feedback: forwarded(state.feedback ?? [], e) };
    case 'tasksPlanned':
    case 'taskQueued':
    case 'taskStarted':
    case 'taskCompleted':
    case 'taskFailed':
    case 'taskCancelled':
    case 'taskSkipped':
      return applyTaskEvent(state, e);
  }
}

/** The phase state a phase event folds into; a run without one has a corrupt ledger. */
function pabcdOf(state: RunState): PabcdState {
  if (state.pabcd) return state.pabcd;
  throw new CorruptStateError(`run ${state.id}: phase event on a run without phases`);
}

/** Steps from `index` on run again; their loop counters start over. */
function rewind(state: RunState, index: number): RunState {
  const steps = state.steps.map((s) => (s.index >= index ? freshVisit(s) : s));
  const loopCounters: Record<string, number> = {};
  for (const [stepId, n] of Object.entries(state.loopCounters)) {
    const step = state.steps.find((s) => s.id === stepId);
    if (step && step.index < index) loopCounters[stepId] = n;
  }
  return { ...without(state, 'trigger'), steps, cursor: index, loopCounters };
}

function ended(
  state: RunState,
  status: 'completed' | 'failed' | 'cancelled',
  reason: string,
  by: RunState['startedBy'] | undefined,
): RunState {
  const outcome = by ? { reason, by } : { reason };
  return { ...without(state, 'blocked'), status, outcome };
}

/** The feedback list with the forwarded entries pointing at their new attempt (first home kept). */
function forwarded(
  list: readonly FeedbackEntry[],
  e: { entries: number[]; stepId: string; forAttempt: number },
): FeedbackEntry[] {
  return list.map((f, i) => {
    if (!e.entries.includes(i)) return f;
    const from = f.forwardedFrom ?? { stepId: f.stepId, forAttempt: f.forAttempt };
    return { ...f, stepId: e.stepId, forAttempt: e.forAttempt, forwardedFrom: from };
  });
}
