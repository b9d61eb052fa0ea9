/**
 * Events: the facts a run's ledger records, folded by evolve(). Plain JSON data only. Also the
 * effects decide() asks the caller to carry out (enqueue jobs, schedule timers), and its result.
 */

import type { EditSource } from './commands.ts';
import type { Directive } from './directive.ts';
import type {
  Actor,
  BlockKind,
  CheckpointState,
  CheckpointVote,
  FeedbackEntry,
  Layout,
  RunInput,
  Telemetry,
} from './model.ts';
import type { PhaseMove } from './pabcd/phases.ts';
import type { TaskResult, TaskSpec } from './tasks/types.ts';
import type { Workflow } from './workflow/types.ts';

/** Fields every event has. */
export interface EventBase {
  /** ISO time (the time of the command that produced it). */
  at: string;
}

/** A run was created; its steps are laid out from the workflow snapshot. */
export interface RunStartedEvent extends EventBase {
  type: 'runStarted';
  runId: string;
  workflow: Workflow;
  workspace: string;
  layout: Layout;
  spec: string;
  /** Files the requester attached (absent when none). */
  inputs?: RunInput[];
  startedBy: Actor;
  selectedTrack?: string;
  selectedConditions: string[];
  resumeFromLastStep: boolean;
}

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

/** A loop sent the run back; steps from `toStepId` to `fromStepId` run again. */
export interface LoopedBackEvent extends EventBase {
  type: 'loopedBack';
  fromStepId: string;
  toStepId: string;
  /** The loop counter of `fromStepId` after this loop. */
  counter: number;
  reason?: string;
}

/** A human went back to a step; it and later steps run again, their loop counters cleared. */
export interface RevertedEvent extends EventBase {
  type: 'reverted';
  toStepId: string;
  source: EditSource;
  by: Actor;
}

/** A human started the run over from its first step. */
export interface RunResetEvent extends EventBase {
  type: 'runReset';
  source: EditSource;
  by: Actor;
}

/** A checkpoint opened; the run awaits an answer. */
export interface CheckpointOpenedEvent extends EventBase {
  type: 'checkpointOpened';
  checkpoint: CheckpointState;
}

/** Someone voted on the open checkpoint. */
export interface CheckpointVotedEvent extends EventBase {
  type: 'checkpointVoted';
  checkpointId: string;
  vote: CheckpointVote;
}

/** The open checkpoint was decided; it moves to the history. */
export interface CheckpointResolvedEvent extends EventBase {
  type: 'checkpointResolved';
  checkpointId: string;
  decision: NonNullable<CheckpointState['decision']>;
}

/**
 * The content digest of the open checkpoint was recorded. With `previous` it replaced an earlier
 * one (the content changed after the message was posted): the votes given so far, for the old
 * content, no longer count.
 */
export interface CheckpointDigestRecordedEvent extends EventBase {
  type: 'checkpointDigestRecorded';
  checkpointId: string;
  digest: string;
  label: string;
  previous?: string;
  /** What changed, in words ("plan.md changed"), with `previous`. */
  change?: string;
}

/** The open checkpoint expired and stays open (onExpiry 'keep'). */
export interface CheckpointExpiredEvent extends EventBase {
  type: 'checkpointExpired';
  checkpointId: string;
}

/** The open checkpoint was closed without a decision (run cancelled, reverted, …). */
export interface CheckpointWithdrawnEvent extends EventBase {
  type: 'checkpointWithdrawn';
  checkpointId: string;
  reason: string;
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

/** The run needs a human. */
export interface RunBlockedEvent extends EventBase {
  type: 'runBlocked';
  kind: BlockKind;
  reason: string;
}

/** A blocked run is active again. */
export interface RunResumedEvent extends EventBase {
  type: 'runResumed';
  by: Actor;
}

/** The run ended successfully. */
export interface RunCompletedEvent extends EventBase {
  type: 'runCompleted';
  reason: string;
  by?: Actor;
}

/** The run ended in failure. */
export interface RunFailedEvent extends EventBase {
  type: 'runFailed';
  reason: string;
  by?: Actor;
}

/** The run was cancelled. */
export interface RunCancelledEvent extends EventBase {
  type: 'runCancelled';
  reason: string;
  by: Actor;
}

/** The PABCD phase changed (codexclaw-layout runs); one row of `.codexclaw/ledger.jsonl`. */
export interface PhaseMovedEvent extends EventBase {
  type: 'phaseMoved';
  move: Omit<PhaseMove, 'at'>;
}

/** A gate did not pass and the agent was told to go on (codexclaw's bounded Stop block). */
export interface PhaseStopBlockedEvent extends EventBase {
  type: 'phaseStopBlocked';
  reason: string;
}

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

/** Every event of a run's ledger, discriminated on `type`. */
/** Reviewers' words recorded for a step's next attempt (request changes, approval, guidance). */
export interface FeedbackRecordedEvent extends EventBase {
  type: 'feedbackRecorded';
  entry: FeedbackEntry;
}

/**
 * Notes no attempt read yet, moved to the attempt that runs instead: the run went past their step
 * (an approval, a step that was not run again), so they would otherwise never be read.
 */
export interface FeedbackForwardedEvent extends EventBase {
  type: 'feedbackForwarded';
  /** Positions of the moved entries in the run's feedback list. */
  entries: number[];
  stepId: string;
  forAttempt: number;
}

export type RunEvent =
  | FeedbackRecordedEvent
  | FeedbackForwardedEvent
  | RunStartedEvent
  | StepQueuedEvent
  | StepStartedEvent
  | SessionInitializedEvent
  | ChainCompletedEvent
  | StepCompletedEvent
  | StepFailedEvent
  | StepSkippedEvent
  | StepCancelledEvent
  | StepInterruptedEvent
  | LoopedBackEvent
  | RevertedEvent
  | RunResetEvent
  | CheckpointOpenedEvent
  | CheckpointVotedEvent
  | CheckpointResolvedEvent
  | CheckpointExpiredEvent
  | CheckpointDigestRecordedEvent
  | CheckpointWithdrawnEvent
  | TriggerQueuedEvent
  | TriggerFinishedEvent
  | RunBlockedEvent
  | RunResumedEvent
  | RunCompletedEvent
  | RunFailedEvent
  | RunCancelledEvent
  | PhaseMovedEvent
  | PhaseStopBlockedEvent
  | TasksPlannedEvent
  | TaskQueuedEvent
  | TaskStartedEvent
  | TaskCompletedEvent
  | TaskFailedEvent
  | TaskCancelledEvent
  | TaskSkippedEvent;

/** The event type names. */
export type RunEventType = RunEvent['type'];

/**
 * Work the caller must do after committing the events: enqueue a job (id
 * `runId:stepId:attempt`; triggers `runId:stepId:trigger:attempt`; tasks
 * `runId:stepId+task+taskId:attempt`), cancel one, read a task list, or schedule a checkpoint's
 * expiry (then send `expireCheckpoint`).
 */
export type Effect =
  | {
      type: 'enqueueStep';
      runId: string;
      stepId: string;
      attempt: number;
      agent: string;
      prompt: string;
      delayMs: number;
      timeoutMs?: number;
    }
  | { type: 'cancelStep'; runId: string; stepId: string; attempt: number }
  | {
      type: 'enqueueTrigger';
      runId: string;
      stepId: string;
      attempt: number;
      agent: string;
      prompt: string;
    }
  | { type: 'scheduleExpiry'; runId: string; checkpointId: string; at: string }
  | {
      /** Read the task list file of a `tasks` step, then send `tasksPlanned` (or `stepFailed`). */
      type: 'loadTasks';
      runId: string;
      stepId: string;
      attempt: number;
      file: string;
      delayMs: number;
    }
  | {
      type: 'enqueueTask';
      runId: string;
      stepId: string;
      taskId: string;
      attempt: number;
      agent: string;
      prompt: string;
      delayMs: number;
      timeoutMs?: number;
    }
  | { type: 'cancelTask'; runId: string; stepId: string; taskId: string; attempt: number };

/** Why a command was refused; the message is meant for the human who sent it. */
export interface Rejection {
  code: 'ILLEGAL_TRANSITION' | 'UNAUTHORIZED' | 'NOT_FOUND' | 'INVALID_INPUT';
  message: string;
}

/** What decide() returns: events to commit and effects to carry out, or a rejection. */
export type Decision =
  | { ok: true; events: RunEvent[]; effects: Effect[] }
  | { ok: false; rejection: Rejection };
