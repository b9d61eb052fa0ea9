/**
 * evolve() for the task events of a `tasks` step. Pure, like evolve.ts: new objects along the
 * changed path only, optional fields omitted rather than undefined.
 */
import { CorruptStateError } from '../../errors.ts';
import type { RunEvent } from '../events.ts';
import { addTelemetry, type RunState, type StepState, stepIndex } from '../model.ts';
import { newTask, type TaskState, taskInFlight } from './types.ts';

/** The task events. */
export type TaskEvent = Extract<
  RunEvent,
  {
    type:
      | 'tasksPlanned'
      | 'taskQueued'
      | 'taskStarted'
      | 'taskCompleted'
      | 'taskFailed'
      | 'taskCancelled'
      | 'taskSkipped';
  }
>;

function omit(t: TaskState, ...keys: (keyof TaskState)[]): TaskState {
  const copy: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(t)) if (!keys.includes(k as keyof TaskState)) copy[k] = v;
  return copy as unknown as TaskState;
}

function withStep(state: RunState, stepId: string, f: (s: StepState) => StepState): RunState {
  const i = stepIndex(state, stepId);
  if (i < 0) throw new CorruptStateError(`run ${state.id}: event names unknown step ${stepId}`);
  const steps = state.steps.slice();
  steps[i] = f(steps[i]!);
  return { ...state, steps };
}

function withTask(
  state: RunState,
  stepId: string,
  taskId: string,
  f: (t: TaskState) => TaskState,
  g: (s: StepState) => StepState = (s) => s,
): RunState {
  return withStep(state, stepId, (s) => {
    const i = s.tasks?.findIndex((t) => t.id === taskId) ?? -1;
    if (i < 0) {
      throw new CorruptStateError(`run ${state.id}: event names unknown task ${stepId}/${taskId}`);
    }
    const tasks = s.tasks!.slice();
    tasks[i] = f(tasks[i]!);
    return g({ ...s, tasks });
  });
}

/** Folds one task event. */
export function applyTaskEvent(state: RunState, e: TaskEvent): RunState {
  switch (e.type) {
    case 'tasksPlanned':
      return withStep(state, e.stepId, (s) => ({
        ...s,
        status: 'running',
        startedAt: e.at,
        tasks: e.tasks.map(newTask),
      }));
    case 'taskQueued':
      return withTask(
        state,
        e.stepId,
        e.taskId,
        (t) => ({
          ...omit(t, 'startedAt', 'finishedAt', 'error', 'result', 'worker'),
          status: 'queued',
          attempt: e.attempt,
          tries: e.tries,
        }),
        (s) => (s.status === 'queued' ? { ...s, status: 'running', startedAt: e.at } : s),
      );
    case 'taskStarted':
      return withTask(state, e.stepId, e.taskId, (t) => ({
        ...t,
        status: 'running',
        startedAt: e.at,
        ...(e.worker === undefined ? {} : { worker: e.worker }),
      }));
    case 'taskCompleted':
      return withTask(
        state,
        e.stepId,
        e.taskId,
        (t) => ({
          ...omit(t, 'error'),
          status: 'completed',
          finishedAt: e.at,
          telemetry: addTelemetry(t.telemetry, e.telemetry),
          ...(e.result !== undefined ? { result: e.result } : {}),
        }),
        (s) => ({ ...s, telemetry: addTelemetry(s.telemetry, e.telemetry) }),
      );
    case 'taskFailed':
      return withTask(
        state,
        e.stepId,
        e.taskId,
        (t) => ({
          ...t,
          status: 'failed',
          finishedAt: e.at,
          error: e.error,
          telemetry: addTelemetry(t.telemetry, e.telemetry),
        }),
        (s) => ({ ...s, telemetry: addTelemetry(s.telemetry, e.telemetry) }),
      );
    case 'taskCancelled':
      return withTask(state, e.stepId, e.taskId, (t) => ({ ...t, status: 'pending' }));
    case 'taskSkipped':
      return withTask(state, e.stepId, e.taskId, (t) => ({
        ...t,
        status: 'skipped',
        finishedAt: e.at,
        error: e.reason,
      }));
  }
}

/**
 * Tasks of a step queued again by a human's `retry`: failed and skipped tasks run again (tries
 * start over); completed tasks are kept, so a retry never redoes finished work.
 */
export function tasksForRetry(tasks: readonly TaskState[]): TaskState[] {
  return tasks.map((t) =>
    t.status === 'failed' || t.status === 'skipped'
      ? { ...omit(t, 'error', 'finishedAt'), status: 'pending', tries: 0 }
      : t,
  );
}

/** Tasks of a step whose process died: in-flight tasks are pending again (re-run, not redone). */
export function tasksAfterInterrupt(tasks: readonly TaskState[]): TaskState[] {
  return tasks.map((t) => (taskInFlight(t) ? { ...t, status: 'pending' } : t));
}
