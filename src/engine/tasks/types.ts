/**
 * Parallel task steps: the shapes a `tasks` step works with. A task list is written by the
 * previous step's agent as JSON; each task runs as its own job, up to `maxWorkers` at once.
 * Plain JSON data only (the run state holds it).
 */
import { z } from 'zod';
import { type Telemetry, ZERO_TELEMETRY } from '../run-basics.ts';

/** Task ids travel in job ids (`run:step+task+<id>:attempt`) and file names. */
export const TASK_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

/** Most tasks one list may hold: a list is folded into the run state and shown in chat. */
export const MAX_TASKS = 200;

/** One entry of a task list file. */
export const taskSpecSchema = z.strictObject({
  id: z
    .string()
    .max(64)
    .regex(
      TASK_ID_PATTERN,
      'must start with a letter or digit and use only letters, digits, _ . -',
    ),
  title: z.string().min(1).max(500),
  /** Higher runs first among ready tasks (default 0). */
  priority: z.int().min(-1000).max(1000).default(0),
  depends_on: z.array(z.string()).default([]),
});

/** The task list file: an array of tasks, or `{ tasks: [...] }`. */
export const taskListSchema = z.union([
  z.array(taskSpecSchema).min(1).max(MAX_TASKS),
  z.strictObject({ tasks: z.array(taskSpecSchema).min(1).max(MAX_TASKS) }),
]);

/** A task as planned (the file's `depends_on` becomes `dependsOn`). */
export interface TaskSpec {
  id: string;
  title: string;
  priority: number;
  dependsOn: string[];
}

/** Where a task is. `skipped`: a task it depends on failed (policy `continue`). */
export type TaskStatus = 'pending' | 'queued' | 'running' | 'completed' | 'failed' | 'skipped';

/** What an agent reported about a finished task's work. */
export interface TaskResult {
  branch?: string;
  pr?: number;
  commit?: string;
}

/** One task of a `tasks` step: its own attempts, log and result. */
export interface TaskState extends TaskSpec {
  status: TaskStatus;
  /** Highest attempt number used (only grows: job ids are never reused). */
  attempt: number;
  /** Attempts in the current round; retries are counted against it. */
  tries: number;
  startedAt?: string;
  finishedAt?: string;
  error?: string;
  result?: TaskResult;
  /** The queue's id of the worker running (or that ran) the current attempt, when known. */
  worker?: string;
  telemetry: Telemetry;
}

/** What happens to the other tasks when one fails for good. */
export type TaskPolicy = 'failFast' | 'continue';

/** The `tasks:` block of a workflow step. */
export interface StepTasks {
  /** Workspace-relative path of the task list file (written by the previous step's agent). */
  file: string;
  maxWorkers: number;
  policy: TaskPolicy;
}

/** A fresh task state for a planned task. */
export function newTask(spec: TaskSpec): TaskState {
  return { ...spec, status: 'pending', attempt: 0, tries: 0, telemetry: { ...ZERO_TELEMETRY } };
}

/** True while a task's job is queued or running. */
export function taskInFlight(t: TaskState): boolean {
  return t.status === 'queued' || t.status === 'running';
}

/** True once a task will not run again in this round. */
export function taskDone(t: TaskState): boolean {
  return t.status === 'completed' || t.status === 'failed' || t.status === 'skipped';
}

/** Reads a task list file's JSON text into specs; throws an Error saying what is wrong. */
export function parseTaskList(text: string): TaskSpec[] {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new Error(`task list is not valid JSON: ${(err as Error).message}`);
  }
  const parsed = taskListSchema.safeParse(raw);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
    throw new Error(`invalid task list: ${issues.join('; ')}`);
  }
  const list = Array.isArray(parsed.data) ? parsed.data : parsed.data.tasks;
  return list.map((t) => ({
    id: t.id,
    title: t.title,
    priority: t.priority,
    dependsOn: [...t.depends_on],
  }));
}
