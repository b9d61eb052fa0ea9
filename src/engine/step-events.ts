/** Events of a run's steps: queued, started, finished, cancelled, and their trigger sub-agents. */
import type { Directive } from './directive.ts';
import type { EventBase } from './event-base.ts';
import type { Actor, Telemetry } from './model.ts';

/** A job for the step was enqueued; the step becomes the current one. */
export interface StepQueuedEvent extends EventBase {
  type: 'stepQueued';
  stepId: string;
  attempt: number;
  delayMs: number;
  mode: QueueMode;
}

/**
 * Why a step is queued: `visit` = a new visit (clears session, chains, tries = 1);
 * `auto-retry` = retry after a failure (tries + 1); `retry` = a human's retry (tries = 1, keeps
 * the session); `resume` = after a pause or crash (tries unchanged, keeps the session).
 */
export type QueueMode = 'visit' | 'auto-retry' | 'retry' | 'resume';

/** A worker started the step's attempt. */
export interface StepStartedEvent extends EventBase {
  type: 'stepStarted';
  stepId: string;
  attempt: number;
}

/** The step's engine session is known. */
export interface SessionInitializedEvent extends EventBase {
  type: 'sessionInitialized';
  stepId: string;
  sessionId: string;
  monitoringId: number;
}

/** A chained prompt of the step completed. */
export interface ChainCompletedEvent extends EventBase {
  type: 'chainCompleted';
  stepId: string;
  chainIndex: number;
}

/** The step's attempt succeeded with this directive. */
export interface StepCompletedEvent extends EventBase {
  type: 'stepCompleted';
  stepId: string;
  attempt: number;
  exitCode: number;
  directive: Directive;
  telemetry: Telemetry;
}

/** The step's attempt failed; `retryInMs` is set when a retry was queued. */
export interface StepFailedEvent extends EventBase {
  type: 'stepFailed';
  stepId: string;
  attempt: number;
  error: string;
  telemetry: Telemetry;
  retryInMs?: number;
}

/** A human skipped the step (CodeMachine marks it done). */
export interface StepSkippedEvent extends EventBase {
  type: 'stepSkipped';
  stepId: string;
  reason: string;
  by: Actor;
}

/** The in-flight attempt was cancelled (pause, revert, …); the step is pending again. */
export interface StepCancelledEvent extends EventBase {
  type: 'stepCancelled';
  stepId: string;
  attempt: number;
  reason: string;
}

/** The process died while the attempt was in flight. */
export interface StepInterruptedEvent extends EventBase {
  type: 'stepInterrupted';
  stepId: string;
  attempt: number;
}

/** A `trigger` directive's sub-agent job was enqueued. */
export interface TriggerQueuedEvent extends EventBase {
  type: 'triggerQueued';
  stepId: string;
  agent: string;
  prompt: string;
  attempt: number;
}

/** The trigger sub-agent exited; `error` is set when it failed. */
export interface TriggerFinishedEvent extends EventBase {
  type: 'triggerFinished';
  stepId: string;
  attempt: number;
  exitCode: number;
  error?: string;
  telemetry: Telemetry;
}
