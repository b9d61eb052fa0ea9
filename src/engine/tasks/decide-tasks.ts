/**
 * Decide rules of a parallel `tasks` step. Entering the step asks the caller to read the task
 * list (effect `loadTasks`); `tasksPlanned` lays the tasks out; then each task runs as its own
 * job, up to `maxWorkers` at once, dependencies first and by priority. A task's failure is
 * retried by the step's `retries`; a task that fails for good stops the others (`failFast`) or
 * leaves only the tasks depending on it unrun (`continue`). When no task is left to run, the step
 * completes (all completed) or fails and the run blocks for a human, whose `retry` re-runs only
 * the tasks that did not complete.
 */
import type {
  TaskFailedCommand,
  TaskFinishedCommand,
  TaskStartedCommand,
  TasksPlannedCommand,
} from '../commands.ts';
import { type DecideContext, refuse } from '../decide-context.ts';
import { continueAfter, defOf } from '../decide-flow.ts';
import type { QueueMode } from '../events.ts';
import { findStep, type StepState, type Telemetry, ZERO_TELEMETRY } from '../model.ts';
import { readyTasks, taskGraphProblem, unrunnableTasks } from './schedule.ts';
import { type TaskResult, type TaskState, taskDone, taskInFlight } from './types.ts';

/** The step's `tasks:` block; only called for tasks steps. */
function tasksDef(ctx: DecideContext, step: StepState) {
  return defOf(ctx, step.index).tasks!;
}

/**
 * Queues a new attempt of a tasks step: a new visit (or a step whose list was never read) asks
 * for its task list; a retry or resume goes on with the tasks it has.
 */
export function queueTasksStep(
  ctx: DecideContext,
  step: StepState,
  mode: QueueMode,
  delayMs: number,
): void {
  const attempt = step.attempt + 1;
  ctx.emit({ type: 'stepQueued', stepId: step.id, attempt, delayMs, mode });
  const now = ctx.state.steps[step.index]!;
  if (now.tasks === undefined) {
    const file = tasksDef(ctx, step).file;
    ctx.effect({ type: 'loadTasks', runId: ctx.state.id, stepId: step.id, attempt, file, delayMs });
    return;
  }
  dispatch(ctx, now.id);
}

/** The step a task report is about: current, running, this attempt of the step. */
function runningTasksStep(ctx: DecideContext, stepId: string): StepState {
  const { state } = ctx;
  const step = findStep(state, stepId);
  if (!step) refuse(`run ${state.id} has no step ${stepId}`, 'NOT_FOUND');
  if (defOf(ctx, step.index).tasks === undefined) {
    refuse(`step ${stepId} is not a tasks step`, 'INVALID_INPUT');
  }
  if (state.status !== 'active') {
    refuse(`stale report for step ${stepId}: run ${state.id} is ${state.status}`);
  }
  if (step.index !== state.cursor || step.status !== 'running' || !step.tasks) {
    refuse(`stale report for step ${stepId}: the step is ${step.status}, not running`);
  }
  return step;
}

/** The task a report is about, when this attempt of it is in flight. */
function inFlightTask(ctx: DecideContext, stepId: string, taskId: string, attempt: number) {
  const step = runningTasksStep(ctx, stepId);
  const task = step.tasks!.find((t) => t.id === taskId);
  if (!task) refuse(`step ${stepId} has no task ${taskId}`, 'NOT_FOUND');
  if (!taskInFlight(task) || task.attempt !== attempt) {
    refuse(
      `stale report for task ${stepId}/${taskId}: attempt ${attempt} is not in flight (task is ${task.status}, attempt ${task.attempt})`,
    );
  }
  return { step, task };
}

function checkTelemetry(t: Telemetry): void {
  const values = [t.tokensIn, t.tokensOut, t.cachedTokens, t.costUsd];
  if (!values.every((v) => Number.isFinite(v) && v >= 0)) {
    refuse('telemetry values must be finite numbers >= 0', 'INVALID_INPUT');
  }
}

/** The task list was read: a sound list is laid out and the first tasks queued. */
export function decideTasksPlanned(ctx: DecideContext, c: TasksPlannedCommand): void {
  const { state } = ctx;
  const step = findStep(state, c.stepId);
  if (!step) refuse(`run ${state.id} has no step ${c.stepId}`, 'NOT_FOUND');
  if (defOf(ctx, step.index).tasks === undefined) {
    refuse(`step ${c.stepId} is not a tasks step`, 'INVALID_INPUT');
  }
  const current =
    state.status === 'active' &&
    step.index === state.cursor &&
    step.status === 'queued' &&
    step.attempt === c.attempt &&
    step.tasks === undefined;
  if (!current) refuse(`stale task list for step ${c.stepId} attempt ${c.attempt}`);
  const problem = taskGraphProblem(c.tasks);
  if (problem !== null) {
    // The agent wrote a list the step cannot run: the step fails with the reason, for a human.
    ctx.emit({
      type: 'stepFailed',
      stepId: step.id,
      attempt: step.attempt,
      error: `bad task list: ${problem}`,
      telemetry: { ...ZERO_TELEMETRY },
    });
    ctx.emit({
      type: 'runBlocked',
      kind: 'failure',
      reason: `step ${step.id} failed: bad task list: ${problem}`,
    });
    return;
  }
  const tasks = c.tasks.map((t) => ({ ...t, dependsOn: [...t.dependsOn] }));
  ctx.emit({ type: 'tasksPlanned', stepId: step.id, tasks });
  dispatch(ctx, step.id);
}

/** A worker picked up a task's queued attempt. */
export function decideTaskStarted(ctx: DecideContext, c: TaskStartedCommand): void {
  const { task } = inFlightTask(ctx, c.stepId, c.taskId, c.attempt);
  if (task.status !== 'queued') refuse(`task ${c.stepId}/${c.taskId} is already running`);
  const worker = typeof c.worker === 'string' && c.worker.length <= 200 ? c.worker : undefined;
  ctx.emit({
    type: 'taskStarted',
    stepId: c.stepId,
    taskId: c.taskId,
    attempt: c.attempt,
    ...(worker === undefined || worker === '' ? {} : { worker }),
  });
}

/** A task's agent exited: exit 0 completes it (an `error` directive fails it). */
export function decideTaskFinished(ctx: DecideContext, c: TaskFinishedCommand): void {
  const { step, task } = inFlightTask(ctx, c.stepId, c.taskId, c.attempt);
  checkTelemetry(c.telemetry);
  if (c.exitCode !== 0 || c.directive.action === 'error') {
    const why =
      c.exitCode !== 0
        ? `agent exited with code ${c.exitCode}`
        : (c.directive.reason ?? 'the agent reported an error');
    failTask(ctx, step, task, why, c.telemetry);
    return;
  }
  const result = resultOf(c.directive.result);
  ctx.emit({
    type: 'taskCompleted',
    stepId: c.stepId,
    taskId: c.taskId,
    attempt: c.attempt,
    telemetry: c.telemetry,
    ...(result !== undefined ? { result } : {}),
  });
  dispatch(ctx, step.id);
}

/** A task's attempt failed, or (interrupted) its job was lost in a crash. */
export function decideTaskFailed(ctx: DecideContext, c: TaskFailedCommand): void {
  const { step, task } = inFlightTask(ctx, c.stepId, c.taskId, c.attempt);
  const telemetry = c.telemetry ?? { ...ZERO_TELEMETRY };
  checkTelemetry(telemetry);
  if (c.interrupted === true && ctx.state.resumeFromLastStep) {
    const { stepId, taskId, attempt } = c;
    ctx.emit({ type: 'taskCancelled', stepId, taskId, attempt, reason: c.error });
    dispatch(ctx, step.id);
    return;
  }
  failTask(ctx, step, task, c.error, telemetry);
}

function resultOf(r: TaskResult | undefined): TaskResult | undefined {
  if (r === undefined) return undefined;
  const out: TaskResult = {};
  if (r.branch !== undefined) out.branch = r.branch;
  if (r.pr !== undefined) out.pr = r.pr;
  if (r.commit !== undefined) out.commit = r.commit;
  return Object.keys(out).length > 0 ? out : undefined;
}

/** Retries the task while the step's `retries` allow; then applies the step's policy. */
function failTask(
  ctx: DecideContext,
  step: StepState,
  task: TaskState,
  error: string,
  telemetry: Telemetry,
): void {
  const retries = defOf(ctx, step.index).retries;
  const base = { stepId: step.id, taskId: task.id, attempt: task.attempt, error, telemetry };
  if (retries && task.tries <= retries.count) {
    const delayMs = retries.backoffMs * 2 ** (task.tries - 1);
    ctx.emit({ type: 'taskFailed', ...base, retryInMs: delayMs });
    queueTask(ctx, step.id, task.id, task.tries + 1, delayMs);
    return;
  }
  ctx.emit({ type: 'taskFailed', ...base });
  if (tasksDef(ctx, step).policy === 'failFast') {
    cancelTasks(ctx, step.id, `task ${task.id} failed (failFast)`);
    failStep(ctx, step.id);
    return;
  }
  dispatch(ctx, step.id);
}

/** Queues one task's next attempt and asks the caller to enqueue its job. */
function queueTask(
  ctx: DecideContext,
  stepId: string,
  taskId: string,
  tries: number,
  delayMs: number,
): void {
  const step = findStep(ctx.state, stepId)!;
  const task = step.tasks!.find((t) => t.id === taskId)!;
  const def = defOf(ctx, step.index);
  const attempt = task.attempt + 1;
  ctx.emit({ type: 'taskQueued', stepId, taskId, attempt, tries, delayMs });
  ctx.effect({
    type: 'enqueueTask',
    runId: ctx.state.id,
    stepId,
    taskId,
    attempt,
    agent: def.agent,
    prompt: taskPrompt(def.prompt, task),
    delayMs,
    ...(def.timeoutMs !== undefined ? { timeoutMs: def.timeoutMs } : {}),
  });
}

/** The prompt a task's agent gets: the step's prompt, then the task. */
export function taskPrompt(stepPrompt: string, task: Pick<TaskState, 'id' | 'title'>): string {
  return `${stepPrompt}\n\nTask ${task.id}: ${task.title}`;
}

/**
 * Skips tasks that can never run (policy continue), queues ready tasks up to maxWorkers, and
 * finishes the step once no task is left in flight or runnable.
 */
function dispatch(ctx: DecideContext, stepId: string): void {
  const tasksOf = () => findStep(ctx.state, stepId)!.tasks!;
  for (let dead = unrunnableTasks(tasksOf()); dead.length > 0; dead = unrunnableTasks(tasksOf())) {
    for (const t of dead) {
      const reason = `a task it depends on failed: ${t.dependsOn.join(', ')}`;
      ctx.emit({ type: 'taskSkipped', stepId, taskId: t.id, reason });
    }
  }
  const step = findStep(ctx.state, stepId)!;
  for (const t of readyTasks(step.tasks!, tasksDef(ctx, step).maxWorkers)) {
    // A task cancelled or lost mid-attempt keeps its tries (a resume, not a retry).
    queueTask(ctx, stepId, t.id, Math.max(1, t.tries), 0);
  }
  const tasks = tasksOf();
  if (!tasks.every(taskDone)) return;
  if (tasks.every((t) => t.status === 'completed')) {
    ctx.emit({
      type: 'stepCompleted',
      stepId,
      attempt: step.attempt,
      exitCode: 0,
      directive: { action: 'continue' },
      telemetry: { ...ZERO_TELEMETRY },
    });
    continueAfter(ctx, findStep(ctx.state, stepId)!);
    return;
  }
  failStep(ctx, stepId);
}

/** The step fails with the list of failed tasks; the run blocks for a human (retry re-runs them). */
function failStep(ctx: DecideContext, stepId: string): void {
  const step = findStep(ctx.state, stepId)!;
  const failed = step.tasks!.filter((t) => t.status === 'failed');
  const named = failed.map((t) => `${t.id} (${t.error ?? 'failed'})`).join(', ');
  const error = `${failed.length} of ${step.tasks!.length} task(s) failed: ${named}`;
  ctx.emit({
    type: 'stepFailed',
    stepId,
    attempt: step.attempt,
    error,
    telemetry: { ...ZERO_TELEMETRY },
  });
  ctx.emit({ type: 'runBlocked', kind: 'failure', reason: `step ${stepId} failed: ${error}` });
}

/** Cancels every in-flight task of the step (pause, cancel, failFast, revert). */
export function cancelTasks(ctx: DecideContext, stepId: string, reason: string): void {
  const step = findStep(ctx.state, stepId);
  for (const t of step?.tasks ?? []) {
    if (!taskInFlight(t)) continue;
    const { id: taskId, attempt } = t;
    ctx.emit({ type: 'taskCancelled', stepId, taskId, attempt, reason });
    ctx.effect({ type: 'cancelTask', runId: ctx.state.id, stepId, taskId, attempt });
  }
}
