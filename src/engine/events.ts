/**
 * Events: the facts a run's ledger records, folded by evolve(). Plain JSON data only. Also the
 * effects decide() asks the caller to carry out (enqueue jobs, schedule timers), and its result.
 * The run's own events are here; those of its steps, checkpoints and tasks are in
 * step-events.ts, checkpoint-events.ts and task-events.ts.
 */
import type {
  CheckpointDigestRecordedEvent,
  CheckpointExpiredEvent,
  CheckpointOpenedEvent,
  CheckpointResolvedEvent,
  CheckpointVotedEvent,
  CheckpointWithdrawnEvent,
} from './checkpoint-events.ts';
import type { EditSource } from './commands.ts';
import type { EventBase } from './event-base.ts';
import type { Actor, BlockKind, FeedbackEntry, Layout, RunInput } from './model.ts';
import type { PhaseMove } from './pabcd/phases.ts';
import type {
  ChainCompletedEvent,
  SessionInitializedEvent,
  StepCancelledEvent,
  StepCompletedEvent,
  StepFailedEvent,
  StepInterruptedEvent,
  StepQueuedEvent,
  StepSkippedEvent,
  StepStartedEvent,
  TriggerFinishedEvent,
  TriggerQueuedEvent,
} from './step-events.ts';
import type {
  TaskCancelledEvent,
  TaskCompletedEvent,
  TaskFailedEvent,
  TaskQueuedEvent,
  TaskSkippedEvent,
  TaskStartedEvent,
  TasksPlannedEvent,
} from './task-events.ts';
import type { Workflow } from './workflow/types.ts';

export type * from './checkpoint-events.ts';
export type * from './event-base.ts';
export type * from './step-events.ts';
export type * from './task-events.ts';

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

/** Every event of a run's ledger, discriminated on `type`. */
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
