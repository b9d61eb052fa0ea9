/**
 * The queue side of parallel `tasks` steps: the job of an `enqueueTask` effect, the commands a
 * task job's signals lead to (pure, keyed `job:<jobId>:<what>` like step jobs), the task list
 * read for a `loadTasks` effect, and where a task's agent logs and writes its directive.
 */
import path from 'node:path';
import { DEFAULT_DIRECTIVE, type Directive } from '../../engine/directive.ts';
import type { Effect } from '../../engine/events.ts';
import { nativeRunDir } from '../../engine/layouts/native.ts';
import { readTextInside, UnsafePathError } from '../../engine/ledger/safe-path.ts';
import {
  findStep,
  type RunState,
  SYSTEM_ACTOR,
  taskQueueStepId,
  ZERO_TELEMETRY,
} from '../../engine/model.ts';
import { parseTaskList } from '../../engine/tasks/types.ts';
import { readRunBranchFile } from '../git/bridge-git.ts';
import { COMMIT_RE, taskBranch } from '../git/run-git.ts';
import type { JobOutcome } from '../queue/port.ts';
import type { PlannedJob, PreparedJob } from './effects.ts';
import { PAYLOAD_VERSION, parseStepJobResult, type StepJobPayload } from './job-payload.ts';
import type { CommandInput, JobRef, KeyedCommand } from './job-results.ts';

/**
 * The job an `enqueueTask` effect asks for (a v2 self-contained payload, like step jobs): the
 * task runs where its step may run (`runsOn`) with the step's permission posture.
 */
export function jobOfTaskEffect(
  state: RunState,
  effect: Extract<Effect, { type: 'enqueueTask' }>,
  prepared: PreparedJob,
): PlannedJob {
  const payload: StepJobPayload = {
    v: PAYLOAD_VERSION,
    kind: 'task',
    stepId: effect.stepId,
    taskId: effect.taskId,
    workspace: prepared.workspace,
    layout: state.layout,
    agent: prepared.agent,
    prompt: effect.prompt,
  };
  if (prepared.problem !== undefined) payload.problem = prepared.problem;
  if (prepared.fullAllowed === true) payload.fullAllowed = true;
  if (effect.timeoutMs !== undefined) payload.timeoutMs = effect.timeoutMs;
  const step = state.workflow.steps.find((s) => s.id === effect.stepId);
  if (step?.runsOn !== undefined) payload.runsOn = [...step.runsOn];
  if (step?.permissions !== undefined) payload.permissions = structuredClone(step.permissions);
  return {
    spec: {
      runId: effect.runId,
      stepId: taskQueueStepId(effect.stepId, effect.taskId),
      attempt: effect.attempt,
      payload: { ...payload },
    },
    delayMs: effect.delayMs,
  };
}

/** `<runDir>/tasks/<stepId>/<taskId>/`: a task's own directive file lives here. */
export function taskDir(workspace: string, runId: string, stepId: string, taskId: string): string {
  return path.join(nativeRunDir(workspace, runId), 'tasks', stepId, taskId);
}

/** The directive file of a task's agent (parallel agents must not share one). */
export function taskDirectivePath(
  workspace: string,
  runId: string,
  stepId: string,
  taskId: string,
): string {
  return path.join(taskDir(workspace, runId, stepId, taskId), 'directive.json');
}

/** The log of one task attempt: `<runDir>/logs/tasks/<stepId>/<taskId>-<attempt>.log`. */
export function taskLogPath(
  workspace: string,
  runId: string,
  stepId: string,
  taskId: string,
  attempt: number,
): string {
  return path.join(
    nativeRunDir(workspace, runId),
    'logs',
    'tasks',
    stepId,
    `${taskId}-${attempt}.log`,
  );
}

function taskState(state: RunState, job: JobRef) {
  const step = findStep(state, job.stepId);
  return step?.tasks?.find((t) => t.id === job.taskId);
}

/** taskStarted for a task job whose agent started, while that attempt is still queued. */
export function taskStartedCommands(state: RunState, job: JobRef, worker?: string): KeyedCommand[] {
  const task = taskState(state, job);
  if (task?.attempt !== job.attempt || task.status !== 'queued') return [];
  const command: CommandInput = {
    type: 'taskStarted',
    stepId: job.stepId,
    taskId: job.taskId!,
    attempt: job.attempt,
    actor: SYSTEM_ACTOR,
    ...(worker === undefined ? {} : { worker }),
  };
  return [{ key: `job:${job.id}:started`, command }];
}

/** The commands a finished task job leads to: its start when never reported, then its result. */
export function taskOutcomeCommands(
  state: RunState,
  job: JobRef,
  outcome: JobOutcome,
): KeyedCommand[] {
  const result = outcome.ok ? parseStepJobResult(outcome.result) : null;
  const base = { stepId: job.stepId, taskId: job.taskId!, attempt: job.attempt };
  const telemetry = result?.telemetry ?? { ...ZERO_TELEMETRY };
  const started = taskStartedCommands(state, job, result?.worker);
  let failure: string | undefined;
  if (!outcome.ok) {
    failure = outcome.cancelled
      ? 'cancelled'
      : outcome.lost
        ? `worker lost: ${outcome.error}`
        : outcome.error;
  } else if (result === null) failure = 'the worker returned an unreadable result';
  else if (!result.ok) failure = result.failure ?? 'the agent failed';
  if (failure !== undefined || result === null) {
    const command: CommandInput = {
      type: 'taskFailed',
      ...base,
      error: failure ?? 'the agent failed',
      telemetry,
      actor: SYSTEM_ACTOR,
      ...(!outcome.ok && outcome.lost === true ? { interrupted: true } : {}),
    };
    return [...started, { key: `job:${job.id}:failed`, command }];
  }
  const command: CommandInput = {
    type: 'taskFinished',
    ...base,
    exitCode: result.exitCode ?? 0,
    directive: withPushedWork(result.directive ?? DEFAULT_DIRECTIVE, state.id, job, result.commit),
    telemetry,
    actor: SYSTEM_ACTOR,
  };
  return [...started, { key: `job:${job.id}:finished`, command }];
}

/**
 * In git mode the worker pushed the task's work: its task branch and commit are the result
 * (what the agent said about them is replaced; a PR number it reported is kept).
 */
function withPushedWork(
  directive: Directive,
  runId: string,
  job: JobRef,
  commit: string | undefined,
): Directive {
  if (commit === undefined || !COMMIT_RE.test(commit) || job.taskId === undefined) return directive;
  const branch = taskBranch(runId, job.taskId);
  return { ...directive, result: { ...directive.result, branch, commit } };
}

/** A task job that vanished (lost while phasebridge was down): taskFailed, marked interrupted. */
export function taskInterruptedCommands(state: RunState, job: JobRef): KeyedCommand[] {
  const task = taskState(state, job);
  const inFlight = task?.status === 'queued' || task?.status === 'running';
  if (state.status !== 'active' || !inFlight || task.attempt !== job.attempt) return [];
  const command: CommandInput = {
    type: 'taskFailed',
    stepId: job.stepId,
    taskId: job.taskId!,
    attempt: job.attempt,
    error: 'interrupted: its job was lost while phasebridge was down',
    interrupted: true,
    actor: SYSTEM_ACTOR,
  };
  return [{ key: `recover:${job.id}`, command }];
}

/** The task jobs a run waits for: every in-flight task of its current step. */
export function inFlightTaskJobs(state: RunState): JobRef[] {
  if (state.status !== 'active') return [];
  const step = state.steps[state.cursor];
  return (step?.tasks ?? [])
    .filter((t) => t.status === 'queued' || t.status === 'running')
    .map((t) => ({
      id: `${state.id}:${taskQueueStepId(step!.id, t.id)}:${t.attempt}`,
      stepId: step!.id,
      attempt: t.attempt,
      kind: 'task' as const,
      taskId: t.id,
    }));
}

/**
 * Reads the task list a `loadTasks` effect names (inside the workspace, no link followed) and
 * returns the command that records it: tasksPlanned, or stepFailed saying what is wrong.
 */
export function taskListCommands(
  state: RunState,
  effect: Extract<Effect, { type: 'loadTasks' }>,
  fromRunBranch?: string | null,
): KeyedCommand[] {
  const step = findStep(state, effect.stepId);
  if (step?.attempt !== effect.attempt || step.status !== 'queued' || step.tasks) return [];
  const key = `tasks:${effect.runId}:${effect.stepId}:${effect.attempt}`;
  const base = { stepId: effect.stepId, attempt: effect.attempt, actor: SYSTEM_ACTOR };
  try {
    // Git mode: the earlier step's worker committed the list on the run branch.
    const text =
      fromRunBranch ?? readTextInside(state.workspace, path.join(state.workspace, effect.file));
    if (text === null) throw new Error(`${effect.file} does not exist`);
    const tasks = parseTaskList(text);
    return [{ key: `${key}:planned`, command: { type: 'tasksPlanned', ...base, tasks } }];
  } catch (err) {
    const why = err instanceof UnsafePathError ? err.message : (err as Error).message;
    const error = `cannot read the task list ${effect.file}: ${why}`;
    return [{ key: `${key}:failed`, command: { type: 'stepFailed', ...base, error } }];
  }
}

/**
 * Reads the task list of a `loadTasks` effect and commits what it holds through `apply`. In git
 * mode the list is the one the earlier step's worker committed on the run branch.
 */
export async function loadTaskList(
  state: RunState,
  effect: Extract<Effect, { type: 'loadTasks' }>,
  gitMode: boolean,
  apply: (plan: (s: RunState) => KeyedCommand[]) => Promise<void>,
): Promise<void> {
  const committed = gitMode
    ? await readRunBranchFile(state.workspace, state.id, effect.file)
    : null;
  await apply((s) => taskListCommands(s, effect, committed));
}
