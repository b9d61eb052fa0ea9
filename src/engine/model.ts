/**
 * The run model: the state a run's event log folds into. Plain JSON-serialisable data only, so
 * the native layout can write it as-is and replay can be compared with deep equality.
 */
import type { Directive } from './directive.ts';
import type { GateName, PabcdState } from './pabcd/phases.ts';
import type { Actor, Telemetry } from './run-basics.ts';
import type { TaskState } from './tasks/types.ts';
import type { Layout, Workflow } from './workflow/types.ts';

export type { Actor, Telemetry } from './run-basics.ts';
export { addTelemetry, SYSTEM_ACTOR, samePerson, ZERO_TELEMETRY } from './run-basics.ts';
export type { Layout, Workflow, WorkflowStep } from './workflow/types.ts';

/** Run status; `completed`, `failed` and `cancelled` are terminal and never change. */
export type RunStatus = 'active' | 'awaiting' | 'blocked' | 'completed' | 'failed' | 'cancelled';

/** Step status; `pending` = not started in its current visit, `queued` = a job is enqueued. */
export type StepStatus = 'pending' | 'queued' | 'running' | 'completed' | 'failed' | 'skipped';

/** One step of a run. */
export interface StepState {
  id: string;
  index: number;
  agent: string;
  status: StepStatus;
  /**
   * Highest attempt number ever used for this step (0 = never queued). It only grows, even across
   * loops and reverts, so a job id `runId:stepId:attempt` is never reused.
   */
  attempt: number;
  /** Attempts in the current visit of the step; retries are counted against this. */
  tries: number;
  /** Engine session id of the current visit, for resume (CodeMachine StepData.sessionId). */
  sessionId?: string;
  /** Agent-run id in the registry (CodeMachine StepData.monitoringId). */
  monitoringId?: number;
  /** Chained prompt indices completed in the current visit. */
  completedChains: number[];
  startedAt?: string;
  finishedAt?: string;
  exitCode?: number;
  error?: string;
  /** The directive the step's last successful attempt returned. */
  directive?: Directive;
  /** Summed over every attempt of the step, including earlier visits: money spent stays spent. */
  telemetry: Telemetry;
  /** Not in the selected track/conditions: never runs, skipped over. */
  excluded?: boolean;
  /** The step's `before` checkpoint was approved for the current visit. */
  gatePassed?: boolean;
  /** Highest trigger sub-agent attempt used by this step (only grows, like `attempt`). */
  triggerAttempt?: number;
  /** The engine session of the step's last earlier visit: resumed when feedback sends it back. */
  previousSessionId?: string;
  /** A `tasks` step's tasks, once its task list was read in this visit. */
  tasks?: TaskState[];
}

/** A vote on a checkpoint. */
export interface CheckpointVote {
  actor: Actor;
  answer: CheckpointAnswer;
  reason?: string;
  at: string;
  /** The content digest (sha256 hex) the voter approved, when the press carried one. */
  digest?: string;
}

/**
 * An answer a human can give to a checkpoint. `loop` is "Request changes": the step (or its
 * `loop.backTo`) runs again with the reason (the name stays `loop` for ledgers already written).
 */
export type CheckpointAnswer = 'approve' | 'reject' | 'loop';

/** Request changes per step when its workflow declares no `loop.max`. */
export const DEFAULT_CHANGES_MAX = 3;

/** What kind of human words a feedback entry holds. */
export type FeedbackKind = 'changes' | 'approval' | 'guidance';

/** Human words for a step's next attempt (who, when, what), recorded in the ledger. */
export interface FeedbackEntry {
  /** The step whose next attempt receives it. */
  stepId: string;
  /** The first attempt of that step that receives it (later attempts see it too). */
  forAttempt: number;
  kind: FeedbackKind;
  by: Actor;
  at: string;
  text: string;
  /** The checkpoint the words answered (request changes, approval) or were given at (guidance). */
  checkpointId?: string;
  /** Where a note was first meant to go, when the run went past it and it was forwarded. */
  forwardedFrom?: { stepId: string; forAttempt: number };
}

/** Why a checkpoint was opened. `pause` is reserved for layouts that model a pause as a gate. */
export type CheckpointKind = 'before' | 'after' | 'directive' | 'loop-limit' | 'pause';

/** How a checkpoint is decided: approvals needed, four-eyes, expiry. */
export interface CheckpointPolicy {
  approvals: number;
  fourEyes: boolean;
  expiresInMs?: number;
  onExpiry: 'reject' | 'approve' | 'keep';
}

/**
 * A human gate. It resolves exactly once (`decision`), or is withdrawn without a decision when
 * the run moves past it (cancel, revert, reset, skip). With onExpiry 'keep' an expired checkpoint
 * stays open (see `expiredAt`); the decision answer 'expired-keep' is never produced by decide().
 */
export interface CheckpointState {
  /** Unique in the run: `${stepId}:${n}`. */
  id: string;
  stepId: string;
  when: CheckpointKind;
  reason: string;
  answers: CheckpointAnswer[];
  policy: CheckpointPolicy;
  openedAt: string;
  expiresAt?: string;
  votes: CheckpointVote[];
  decision?: {
    answer: CheckpointAnswer | 'expired-keep';
    by: Actor[];
    at: string;
    reason?: string;
    /** The content digest the deciding answer was given for (sha256 hex). */
    digest?: string;
  };
  /**
   * The sha256 (hex) of what the checkpoint's message shows and links to (the step's artifacts,
   * diff and final answer), computed at the edge and recorded when the message is posted.
   */
  digest?: string;
  /** The digest's short form as messages show it: "plan.md, 3 files, a1b2c3". */
  digestLabel?: string;
  /** Set when the digest was replaced: what changed after the message was first posted. */
  contentChanged?: string;
  /** Set when the checkpoint expired and was kept open (onExpiry 'keep'). */
  expiredAt?: string;
  /** Set when the checkpoint was closed without a decision. */
  withdrawn?: { at: string; reason: string };
  /** A PABCD gate that did not pass: approving it is an override (a reason is required). */
  gate?: GateName;
}

/** Why a run is blocked and needs a human. */
export type BlockKind = 'failure' | 'interrupted' | 'paused' | 'corrupt' | 'retries-exhausted';

/** A `trigger` directive's sub-agent run, awaited before the step's run moves on. */
export interface PendingTrigger {
  stepId: string;
  agent: string;
  prompt: string;
  /** Own attempt counter: job id `runId:stepId:trigger:attempt`. */
  attempt: number;
  status: 'queued' | 'failed';
  error?: string;
}

/** A file the requester attached to the run, saved in the run's `inputs/` folder. */
export interface RunInput {
  /** Path relative to the workspace (`.phasebridge/runs/<id>/inputs/photo-1.jpg`). */
  path: string;
  bytes: number;
  /** What its content was checked to be. */
  kind: 'image' | 'pdf' | 'text';
}

/** The whole state of one run, folded from its events. */
export interface RunState {
  id: string;
  /** Number of events applied. */
  seq: number;
  /** Snapshot of the workflow taken at start; later edits of the file do not change the run. */
  workflow: Workflow;
  workspace: string;
  layout: Layout;
  status: RunStatus;
  /** The specification text the run was started with. */
  spec: string;
  /** Files the requester attached (absent when none). */
  inputs?: RunInput[];
  startedBy: Actor;
  createdAt: string;
  updatedAt: string;
  selectedTrack?: string;
  selectedConditions: string[];
  /** CodeMachine's flag: after a crash, restart the interrupted step instead of blocking. */
  resumeFromLastStep: boolean;
  steps: StepState[];
  /** Index of the current step (once the run has ended: the last step it reached). */
  cursor: number;
  /** Per step id: how many times that step looped back. Never above the step's loop.max. */
  loopCounters: Record<string, number>;
  /** The open checkpoint, if any (status is then `awaiting`). */
  checkpoint: CheckpointState | null;
  /** Resolved or withdrawn checkpoints, oldest first. */
  checkpoints: CheckpointState[];
  /** A trigger sub-agent the run waits for. */
  trigger?: PendingTrigger;
  blocked?: { reason: string; kind: BlockKind };
  /** Why the run ended. */
  outcome?: { reason: string; by?: Actor };
  /** The PABCD phase, flags and moves (codexclaw-layout runs only). */
  pabcd?: PabcdState;
  /** Reviewers' words for later attempts, oldest first (absent until the first one). */
  feedback?: FeedbackEntry[];
}

/** The feedback an attempt of a step receives, oldest first. */
export function feedbackFor(state: RunState, stepId: string, attempt: number): FeedbackEntry[] {
  return (state.feedback ?? []).filter((f) => f.stepId === stepId && f.forAttempt <= attempt);
}

/** True for statuses a run never leaves. */
export function isTerminal(status: RunStatus): boolean {
  return status === 'completed' || status === 'failed' || status === 'cancelled';
}

/** The run's current step, or undefined when the workflow has no steps. */
export function currentStep(state: RunState): StepState | undefined {
  return state.steps[state.cursor];
}

/** The step with this id, or undefined. */
export function findStep(state: RunState, stepId: string): StepState | undefined {
  const i = stepIndex(state, stepId);
  return i < 0 ? undefined : state.steps[i];
}

/**
 * Index of the step with this id, or -1. Commands and events nearly always name the current step
 * or the next one: those are looked at first, so a long workflow is not scanned on every commit.
 */
export function stepIndex(state: RunState, stepId: string): number {
  const { steps, cursor } = state;
  if (steps[cursor]?.id === stepId) return cursor;
  if (steps[cursor + 1]?.id === stepId) return cursor + 1;
  return steps.findIndex((s) => s.id === stepId);
}

/** Job id of a step attempt; a duplicate enqueue of the same id is a no-op in every queue. */
export function stepJobId(runId: string, stepId: string, attempt: number): string {
  return `${runId}:${stepId}:${attempt}`;
}

/** Queue step id of a task's jobs: `<stepId>+task+<taskId>` ('+' is not allowed in ids). */
export function taskQueueStepId(stepId: string, taskId: string): string {
  return `${stepId}+task+${taskId}`;
}

/** Job id of a task attempt of a `tasks` step. */
export function taskJobId(runId: string, stepId: string, taskId: string, attempt: number): string {
  return `${runId}:${taskQueueStepId(stepId, taskId)}:${attempt}`;
}

/** Job id of a trigger sub-agent attempt (distinct from the step's own job ids). */
export function triggerJobId(runId: string, stepId: string, attempt: number): string {
  return `${runId}:${stepId}:trigger:${attempt}`;
}

/** True when a workflow step runs under the selected track and conditions. */
export function stepApplies(
  step: { tracks?: readonly string[]; conditions?: readonly string[] },
  selectedTrack: string | undefined,
  selectedConditions: readonly string[],
): boolean {
  if (step.tracks && step.tracks.length > 0) {
    if (selectedTrack === undefined || !step.tracks.includes(selectedTrack)) return false;
  }
  return (step.conditions ?? []).every((c) => selectedConditions.includes(c));
}

/** The run id format (the flow layout's), e.g. `2026-11-29T143000Z-add-login`. */
export const RUN_ID_PATTERN = /^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{6}Z-[a-z0-9-]+$/;
