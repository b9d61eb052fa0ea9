/**
 * Commands: what a human, a worker or the engine's own timers ask a run to do. Every command
 * carries its time and actor so decide() stays pure. The idempotency key travels beside the
 * command (RunStore.commit), not inside it.
 */
import type { Directive } from './directive.ts';
import type { Actor, CheckpointAnswer, Layout, RunInput, Telemetry } from './model.ts';
import type { TaskSpec } from './tasks/types.ts';
import type { Workflow } from './workflow/types.ts';

/** Fields every command has. */
export interface CommandBase {
  /** ISO time the command was issued. */
  at: string;
  actor: Actor;
}

/** Where a revert/reset came from: a command, or a hand edit of a layout file (template.json). */
export type EditSource = 'command' | 'file-edit';

/** Start a new run (the only command decided against no state). */
export interface StartCommand extends CommandBase {
  type: 'start';
  runId: string;
  workflow: Workflow;
  workspace: string;
  layout: Layout;
  spec: string;
  /** Files the requester attached, already saved in the run's inputs folder. */
  inputs?: RunInput[];
  selectedTrack?: string;
  selectedConditions?: string[];
  /** Defaults to true, as in CodeMachine. */
  resumeFromLastStep?: boolean;
}

/** A worker picked up a step's job. */
export interface StepStartedCommand extends CommandBase {
  type: 'stepStarted';
  stepId: string;
  attempt: number;
}

/** The agent's engine session is known (CodeMachine "Session Init"). */
export interface SessionInitializedCommand extends CommandBase {
  type: 'sessionInitialized';
  stepId: string;
  sessionId: string;
  monitoringId: number;
}

/** One chained prompt of the running step completed. */
export interface ChainCompletedCommand extends CommandBase {
  type: 'chainCompleted';
  stepId: string;
  chainIndex: number;
}

/** The step's agent exited; a non-zero exit code is a failure of that attempt. */
export interface StepFinishedCommand extends CommandBase {
  type: 'stepFinished';
  stepId: string;
  attempt: number;
  exitCode: number;
  directive: Directive;
  telemetry: Telemetry;
}

/** The step's attempt failed (spawn error, timeout, invalid directive file, …). */
export interface StepFailedCommand extends CommandBase {
  type: 'stepFailed';
  stepId: string;
  attempt: number;
  error: string;
  telemetry?: Telemetry;
}

/** The sub-agent of a `trigger` directive exited. */
export interface TriggerFinishedCommand extends CommandBase {
  type: 'triggerFinished';
  stepId: string;
  attempt: number;
  exitCode: number;
  error?: string;
  telemetry?: Telemetry;
}

/** A human answers the open checkpoint (or the named one, to catch stale buttons). */
export interface AnswerCheckpointCommand extends CommandBase {
  type: 'answerCheckpoint';
  checkpointId?: string;
  answer: CheckpointAnswer;
  reason?: string;
  /** The content digest computed at press time; refused when it is not the checkpoint's. */
  digest?: string;
}

/**
 * The edge computed the open checkpoint's content digest: recorded when its message is posted,
 * and again when a press found the content changed (the message is then shown anew).
 */
export interface RecordCheckpointDigestCommand extends CommandBase {
  type: 'recordCheckpointDigest';
  checkpointId: string;
  digest: string;
  label: string;
  /** What changed, in words, when it replaces an earlier digest ("plan.md changed"). */
  change?: string;
}

/**
 * A human asks for changes at the open checkpoint (or the named one): the step, or its
 * `loop.backTo`, runs again with the reason as feedback. Counts against the step's loop max.
 * The same as answerCheckpoint with answer `loop`; the console and chat call it by this name.
 */
export interface RequestChangesCommand extends CommandBase {
  type: 'requestChanges';
  checkpointId?: string;
  reason: string;
  /** As answerCheckpoint's. */
  digest?: string;
}

/** A human's guidance (a reply in chat) for the current step's next attempt. */
export interface GiveGuidanceCommand extends CommandBase {
  type: 'giveGuidance';
  text: string;
}

/** The expiry timer of a checkpoint fired. */
export interface ExpireCheckpointCommand extends CommandBase {
  type: 'expireCheckpoint';
  checkpointId: string;
}

/**
 * A person re-opens the open checkpoint that expired and was kept open: it is withdrawn (shown
 * as expired) and the same question opens again as a new checkpoint with a fresh expiry.
 */
export interface ReopenCheckpointCommand extends CommandBase {
  type: 'reopenCheckpoint';
  /** When given, only if this is still the open checkpoint. */
  checkpointId?: string;
}

/** CodeMachine Ctrl+S: mark the current step skipped (done) and move on. */
export interface SkipCommand extends CommandBase {
  type: 'skip';
  /** When given, the skip applies only if this is still the current step. */
  stepId?: string;
  reason?: string;
  /**
   * Skip `stepId`, a later step not yet started, in advance: it is marked skipped now and passed
   * over when the run reaches it (a completedSteps entry added to template.json by hand).
   */
  ahead?: boolean;
}

/** Stop work now (the in-flight step is cancelled) and wait for resume. */
export interface PauseCommand extends CommandBase {
  type: 'pause';
  reason?: string;
}

/** Continue a run blocked as paused or interrupted. */
export interface ResumeCommand extends CommandBase {
  type: 'resume';
}

/** Run the failed (or interrupted) step again as a new attempt. */
export interface RetryCommand extends CommandBase {
  type: 'retry';
}

/** End the run as cancelled. */
export interface CancelCommand extends CommandBase {
  type: 'cancel';
  reason?: string;
}

/** Go back to an earlier step: it and every later step run again. */
export interface RevertCommand extends CommandBase {
  type: 'revert';
  toStepId: string;
  source: EditSource;
}

/** Start the run over from its first step. */
export interface ResetCommand extends CommandBase {
  type: 'reset';
  source: EditSource;
}

/** At start-up: a step was in flight when the process died. */
export interface RecoverInterruptedCommand extends CommandBase {
  type: 'recoverInterrupted';
}

/** The task list of a `tasks` step's attempt was read (by the caller, from the step's file). */
export interface TasksPlannedCommand extends CommandBase {
  type: 'tasksPlanned';
  stepId: string;
  attempt: number;
  tasks: TaskSpec[];
}

/** A worker picked up a task's job. */
export interface TaskStartedCommand extends CommandBase {
  type: 'taskStarted';
  stepId: string;
  taskId: string;
  attempt: number;
  /** The queue's id of the worker that took the job, when it says. */
  worker?: string;
}

/** A task's agent exited; a non-zero exit code (or an `error` directive) fails the attempt. */
export interface TaskFinishedCommand extends CommandBase {
  type: 'taskFinished';
  stepId: string;
  taskId: string;
  attempt: number;
  exitCode: number;
  directive: Directive;
  telemetry: Telemetry;
}

/**
 * A task's attempt failed; `interrupted`: its job was lost (a crash), so it runs again as a new
 * attempt when the run resumes by itself instead of counting as a failure.
 */
export interface TaskFailedCommand extends CommandBase {
  type: 'taskFailed';
  stepId: string;
  taskId: string;
  attempt: number;
  error: string;
  telemetry?: Telemetry;
  interrupted?: boolean;
}

/** Every command a run accepts, discriminated on `type`. */
export type Command =
  | StartCommand
  | StepStartedCommand
  | SessionInitializedCommand
  | ChainCompletedCommand
  | StepFinishedCommand
  | StepFailedCommand
  | TriggerFinishedCommand
  | AnswerCheckpointCommand
  | RequestChangesCommand
  | RecordCheckpointDigestCommand
  | GiveGuidanceCommand
  | ExpireCheckpointCommand
  | ReopenCheckpointCommand
  | SkipCommand
  | PauseCommand
  | ResumeCommand
  | RetryCommand
  | CancelCommand
  | RevertCommand
  | ResetCommand
  | RecoverInterruptedCommand
  | TasksPlannedCommand
  | TaskStartedCommand
  | TaskFinishedCommand
  | TaskFailedCommand;

/** The command type names. */
export type CommandType = Command['type'];
