/**
 * What travels through the queue between the orchestrator and a worker (possibly another process
 * or machine): the job payload, and the result the worker returns. Both are plain JSON, checked
 * with zod on arrival since the other side may be another version of phasebridge.
 *
 * Queue job ids are `runId:stepId:attempt` and may not hold more ':' parts, so a trigger
 * sub-agent's job uses the queue step id `<stepId>+trigger` ('+' is not allowed in step ids).
 */
import { z } from 'zod';
import type { Directive } from '../../engine/directive.ts';
import { directiveSchema } from '../../engine/directive.ts';
import type { Layout, Telemetry } from '../../engine/model.ts';
import { type AgentPermissions, POSTURES } from '../../engine/workflow/types.ts';
import { InvalidInputError } from '../../errors.ts';

/** Suffix of a trigger job's queue step id. */
export const TRIGGER_SUFFIX = '+trigger';

/** The queue step id of a step's trigger sub-agent job. */
export function triggerQueueStepId(stepId: string): string {
  return `${stepId}${TRIGGER_SUFFIX}`;
}

/** Separates step and task id in a task job's queue step id (`<stepId>+task+<taskId>`). */
export const TASK_INFIX = '+task+';

/** Splits a queue step id into the workflow step id, the kind of job and (tasks) the task id. */
export function parseQueueStepId(queueStepId: string): {
  stepId: string;
  kind: 'step' | 'trigger' | 'task';
  taskId?: string;
} {
  const at = queueStepId.indexOf(TASK_INFIX);
  if (at > 0) {
    const taskId = queueStepId.slice(at + TASK_INFIX.length);
    return { stepId: queueStepId.slice(0, at), kind: 'task', taskId };
  }
  return queueStepId.endsWith(TRIGGER_SUFFIX)
    ? { stepId: queueStepId.slice(0, -TRIGGER_SUFFIX.length), kind: 'trigger' }
    : { stepId: queueStepId, kind: 'step' };
}

const layoutSchema = z.enum(['native', 'codemachine', 'codexclaw', 'flow', 'coordinator']);

/** The payload of a step or trigger job. */
export const stepJobPayloadSchema = z.object({
  kind: z.enum(['step', 'trigger', 'task']),
  /** The task of a `tasks` step (kind 'task' only). */
  taskId: z.string().min(1).optional(),
  /** The workflow step id (without the '+trigger' suffix). */
  stepId: z.string().min(1),
  workspace: z.string().min(1),
  layout: layoutSchema,
  agent: z.string().min(1),
  prompt: z.string(),
  timeoutMs: z.number().int().positive().optional(),
  /** The run has `resumeFromLastStep: false`: a job taken again after its worker died must not run. */
  noResume: z.boolean().optional(),
  /** Chained prompts of the step, run in order in one job; `prompt` is the first. */
  chain: z.array(z.string()).min(2).optional(),
  /** Chain indexes already completed in this visit (a retry or resume goes on from there). */
  chainsDone: z.array(z.number().int().nonnegative()).optional(),
  /** The step's declared permission posture (workflow `permissions:`). */
  permissions: z
    .object({
      posture: z.enum(POSTURES),
      allow: z.array(z.string()).optional(),
      deny: z.array(z.string()).optional(),
    })
    .optional(),
});

/** A step or trigger job's payload. */
export interface StepJobPayload {
  kind: 'step' | 'trigger' | 'task';
  taskId?: string;
  stepId: string;
  workspace: string;
  layout: Layout;
  agent: string;
  prompt: string;
  timeoutMs?: number;
  noResume?: boolean;
  chain?: string[];
  chainsDone?: number[];
  permissions?: AgentPermissions;
}

/** Reads a job payload; InvalidInputError says what is wrong. */
export function parseStepJobPayload(payload: Record<string, unknown>): StepJobPayload {
  const parsed = stepJobPayloadSchema.safeParse(payload);
  if (!parsed.success) {
    throw new InvalidInputError(`bad job payload: ${z.prettifyError(parsed.error)}`);
  }
  if ((parsed.data.kind === 'task') !== (parsed.data.taskId !== undefined)) {
    throw new InvalidInputError('bad job payload: taskId is given exactly for kind "task"');
  }
  return parsed.data;
}

const telemetrySchema = z.object({
  tokensIn: z.number().nonnegative(),
  tokensOut: z.number().nonnegative(),
  cachedTokens: z.number().nonnegative(),
  costUsd: z.number().nonnegative(),
});

/** What a worker returns for a job (the agent runner's outcome plus where it logged). */
export const stepJobResultSchema = z.object({
  ok: z.boolean(),
  exitCode: z.number().int().nullable(),
  signal: z.string().nullable(),
  timedOut: z.boolean(),
  cancelled: z.boolean(),
  failure: z.string().optional(),
  directive: directiveSchema.nullable(),
  telemetry: telemetrySchema,
  outputTail: z.array(z.string()),
  durationMs: z.number().nonnegative(),
  /** registry.db id of the agent run (codemachine layout only). */
  monitoringId: z.number().int().nonnegative().optional(),
  sessionId: z.string().min(1),
  /** The engine's own session id, when the agent's output announced one. */
  engineSessionId: z.string().min(1).optional(),
  /** The job was taken again after its worker died and the run forbids resuming: not run. */
  interrupted: z.boolean().optional(),
  /** Chain indexes this job completed (chained prompts only). */
  completedChains: z.array(z.number().int().nonnegative()).optional(),
  logFile: z.string(),
});

/** A job's result. */
export interface StepJobResult {
  ok: boolean;
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  cancelled: boolean;
  failure?: string;
  directive: Directive | null;
  telemetry: Telemetry;
  outputTail: string[];
  durationMs: number;
  monitoringId?: number;
  sessionId: string;
  engineSessionId?: string;
  interrupted?: boolean;
  completedChains?: number[];
  logFile: string;
}

/** Reads a job result; null when it is not one (then the job counts as failed). */
export function parseStepJobResult(result: Record<string, unknown>): StepJobResult | null {
  const parsed = stepJobResultSchema.safeParse(result);
  return parsed.success ? parsed.data : null;
}

/** What a worker says when an agent process has started. */
export interface StepStartInfo {
  /** The agent's process id, once it exists. */
  pid?: number;
  sessionId: string;
  monitoringId?: number;
}

/**
 * What a step job reports while it runs (the queue's progress channel, so it reaches the
 * orchestrator from a worker in another process too): the agent started, the engine announced
 * its own session id, a chained prompt completed, or a `::progress` line.
 */
export const stepReportSchema = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('started'),
    sessionId: z.string().min(1),
    monitoringId: z.number().int().nonnegative().optional(),
    pid: z.number().int().positive().optional(),
  }),
  z.object({
    kind: z.literal('session'),
    sessionId: z.string().min(1),
    monitoringId: z.number().int().nonnegative().optional(),
  }),
  z.object({ kind: z.literal('chain'), index: z.number().int().nonnegative() }),
  z.object({ kind: z.literal('progress'), text: z.string() }),
]);

/** A step job's report. */
export type StepReport = z.infer<typeof stepReportSchema>;

/** Reads a report; null for data that is not one (another producer's, a newer version's). */
export function parseStepReport(data: Record<string, unknown>): StepReport | null {
  const parsed = stepReportSchema.safeParse(data);
  return parsed.success ? parsed.data : null;
}
