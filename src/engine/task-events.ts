/** Events of the tasks of a `tasks` step: planned, queued, started, finished, cancelled. */
import type { EventBase } from './event-base.ts';
import type { Telemetry } from './model.ts';
import type { TaskResult, TaskSpec } from './tasks/types.ts';

/** The task list of a `tasks` step was read; every task starts pending. */
export interface TasksPlannedEvent extends EventBase {
  type: 'tasksPlanned';
  stepId: string;
  tasks: TaskSpec[];
}

/** A job for one task of a `tasks` step was enqueued (`tries`: attempts in this round). */
export interface TaskQueuedEvent extends EventBase {
  type: 'taskQueued';
  stepId: string;
  taskId: string;
  attempt: number;
  tries: number;
  delayMs: number;
}

/** A worker started a task's attempt. */
export interface TaskStartedEvent extends EventBase {
  type: 'taskStarted';
  stepId: string;
  taskId: string;
  attempt: number;
  /** The queue's id of the worker that took the job. */
  worker?: string;
}

/** A task's attempt succeeded. */
export interface TaskCompletedEvent extends EventBase {
  type: 'taskCompleted';
  stepId: string;
  taskId: string;
  attempt: number;
  telemetry: Telemetry;
  result?: TaskResult;
}

/** A task's attempt failed; `retryInMs` is set when a retry was queued. */
export interface TaskFailedEvent extends EventBase {
  type: 'taskFailed';
  stepId: string;
  taskId: string;
  attempt: number;
  error: string;
  telemetry: Telemetry;
  retryInMs?: number;
}

/** A task's in-flight attempt was cancelled or lost; the task is pending again. */
export interface TaskCancelledEvent extends EventBase {
  type: 'taskCancelled';
  stepId: string;
  taskId: string;
  attempt: number;
  reason: string;
}

/** A task will not run: a task it depends on failed (policy `continue`). */
export interface TaskSkippedEvent extends EventBase {
  type: 'taskSkipped';
  stepId: string;
  taskId: string;
  reason: string;
}
