/**
 * Job signals → engine commands (pure). A started agent becomes stepStarted + sessionInitialized
 * (again once the engine announces its own session id), a chained prompt chainCompleted; a
 * finished job becomes stepFinished / stepFailed / triggerFinished, or recoverInterrupted when
 * its worker refused a re-take. Every command carries a key
 * `job:<jobId>:<what>`, so a signal applied twice (two listening processes, a redelivery) is
 * committed once; reports about attempts that are no longer current are refused by decide().
 */
import type { Command } from '../../engine/commands.ts';
import { DEFAULT_DIRECTIVE } from '../../engine/directive.ts';
import { findStep, type RunState, SYSTEM_ACTOR, ZERO_TELEMETRY } from '../../engine/model.ts';
import type { JobOutcome } from '../queue/port.ts';
import { parseStepJobResult, type StepJobResult } from './job-payload.ts';
import { taskOutcomeCommands, taskStartedCommands } from './task-jobs.ts';

/** `Omit` applied to each member of a union. */
export type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** A command as callers give it: the orchestrator fills `at` from its clock. */
export type CommandInput = DistributiveOmit<Command, 'at'>;

/** A command and its idempotency key. */
export interface KeyedCommand {
  key: string;
  command: CommandInput;
}

/** The job a signal is about: its id, workflow step, attempt and kind (and task, for tasks). */
export interface JobRef {
  id: string;
  stepId: string;
  attempt: number;
  kind: 'step' | 'trigger' | 'task';
  taskId?: string;
}

/**
 * The monitoringId of a native-layout attempt: how many step attempts the run has queued so far
 * (attempt numbers only grow), so each attempt of a run gets its own number, 1, 2, 3, ….
 * The codemachine layout uses the attempt's registry.db row id instead (set by the worker, or in
 * git mode by the bridge when it queued the job, see remote-registry.ts).
 */
export function nativeMonitoringId(state: RunState): number {
  return state.steps.reduce((sum, s) => sum + s.attempt, 0);
}

/** What a worker knows of a started agent; `engine` marks a session id the engine announced. */
export interface StartInfo {
  sessionId?: string;
  monitoringId?: number;
  engine?: boolean;
  /** The worker that took the job. */
  worker?: string;
}

/**
 * stepStarted + sessionInitialized for a step job whose agent started, each only while it is
 * still to do for that attempt; empty for triggers (they have no start event) and for attempts
 * that are no longer in flight. The job id stands in as session id until the engine announces
 * its own (a second sessionInitialized, keyed apart); it never replaces an engine's id once the
 * attempt runs, as a late or redelivered start report would.
 */
export function startedCommands(
  state: RunState,
  job: JobRef,
  info: StartInfo = {},
): KeyedCommand[] {
  if (job.kind === 'task') return taskStartedCommands(state, job, info.worker);
  if (job.kind !== 'step') return [];
  const step = findStep(state, job.stepId);
  if (step?.attempt !== job.attempt) return [];
  if (step.status !== 'queued' && step.status !== 'running') return [];
  const { stepId, attempt } = job;
  const out: KeyedCommand[] = [];
  if (step.status === 'queued') {
    out.push({
      key: `job:${job.id}:started`,
      command: { type: 'stepStarted', stepId, attempt, actor: SYSTEM_ACTOR },
    });
  }
  const sessionId = info.sessionId ?? job.id;
  const engine = info.engine === true;
  const placeholderTooLate = !engine && step.status === 'running' && step.sessionId !== undefined;
  if (step.sessionId !== sessionId && !placeholderTooLate) {
    out.push({
      key: `job:${job.id}:${engine ? 'engine-session' : 'session'}`,
      command: {
        type: 'sessionInitialized',
        stepId,
        sessionId,
        monitoringId: info.monitoringId ?? nativeMonitoringId(state),
        actor: SYSTEM_ACTOR,
      },
    });
  }
  return out;
}

/**
 * chainCompleted for chained prompts a step job completed, each once (key per index) and only
 * while its attempt is in flight. `afterStart`: the caller commits a stepStarted first, so a
 * still-queued step counts as running (a result whose start report was lost).
 */
export function chainCommands(
  state: RunState,
  job: JobRef,
  indexes: readonly number[],
  afterStart = false,
): KeyedCommand[] {
  if (job.kind !== 'step') return [];
  const step = findStep(state, job.stepId);
  if (step?.attempt !== job.attempt) return [];
  if (step.status !== 'running' && !(afterStart && step.status === 'queued')) return [];
  return indexes
    .filter((i) => !step.completedChains.includes(i))
    .map((chainIndex) => ({
      key: `job:${job.id}:chain:${chainIndex}`,
      command: { type: 'chainCompleted', stepId: job.stepId, chainIndex, actor: SYSTEM_ACTOR },
    }));
}

/** Why a job that produced no usable result failed, in words for the run's blocked reason. */
function queueFailure(outcome: Extract<JobOutcome, { ok: false }>): string {
  if (outcome.cancelled) return 'cancelled';
  if (outcome.lost) return `worker lost: ${outcome.error}`;
  return outcome.error;
}

/**
 * The commands a finished job leads to, in order: its start (when never reported, e.g. the
 * worker ran in another process) and its result.
 */
export function outcomeCommands(state: RunState, job: JobRef, outcome: JobOutcome): KeyedCommand[] {
  if (job.kind === 'task') return taskOutcomeCommands(state, job, outcome);
  const result = outcome.ok ? parseStepJobResult(outcome.result) : null;
  let failure: string | undefined;
  if (!outcome.ok) failure = queueFailure(outcome);
  else if (result === null) failure = 'the worker returned an unreadable result';
  else if (!result.ok) failure = result.failure ?? 'the agent failed';
  const telemetry = result?.telemetry ?? { ...ZERO_TELEMETRY };

  if (job.kind === 'trigger') {
    const command: CommandInput = {
      type: 'triggerFinished',
      stepId: job.stepId,
      attempt: job.attempt,
      exitCode: result?.exitCode ?? -1,
      telemetry,
      actor: SYSTEM_ACTOR,
      ...(failure === undefined ? {} : { error: failure }),
    };
    return [{ key: `job:${job.id}:finished`, command }];
  }
  if (result?.interrupted === true) return retakeCommands(state, job);
  const started = [
    ...startedCommands(state, job, startInfoOf(result)),
    ...chainCommands(state, job, result?.completedChains ?? [], true),
  ];
  const { stepId, attempt } = job;
  if (failure !== undefined || result === null) {
    const command: CommandInput = {
      type: 'stepFailed',
      stepId,
      attempt,
      error: failure ?? 'the agent failed',
      telemetry,
      actor: SYSTEM_ACTOR,
    };
    return [...started, { key: `job:${job.id}:failed`, command }];
  }
  const command: CommandInput = {
    type: 'stepFinished',
    stepId,
    attempt,
    exitCode: result.exitCode ?? 0,
    directive: result.directive ?? DEFAULT_DIRECTIVE,
    telemetry,
    actor: SYSTEM_ACTOR,
  };
  return [...started, { key: `job:${job.id}:finished`, command }];
}

/**
 * A worker refused to re-run a job taken again after a lost lease (`resumeFromLastStep: false`):
 * recoverInterrupted, which blocks such a run for a human; nothing when the attempt is stale.
 */
function retakeCommands(state: RunState, job: JobRef): KeyedCommand[] {
  const step = state.steps[state.cursor];
  const current =
    state.status === 'active' &&
    step?.id === job.stepId &&
    step.attempt === job.attempt &&
    (step.status === 'queued' || step.status === 'running');
  if (!current) return [];
  const command: CommandInput = { type: 'recoverInterrupted', actor: SYSTEM_ACTOR };
  return [{ key: `job:${job.id}:interrupted`, command }];
}

/** The start a result implies; the engine's session id wins over the job id it stood in for. */
function startInfoOf(result: StepJobResult | null): StartInfo {
  if (result === null) return {};
  const info: StartInfo =
    result.engineSessionId === undefined
      ? { sessionId: result.sessionId }
      : { sessionId: result.engineSessionId, engine: true };
  if (result.monitoringId !== undefined) info.monitoringId = result.monitoringId;
  return info;
}
