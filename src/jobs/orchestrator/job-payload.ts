/**
 * What travels through the queue between the orchestrator and a worker (possibly another process
 * or machine): the job payload, and the result the worker returns. Both are plain JSON, checked
 * with zod on arrival since the other side may be another version of phasebridge.
 *
 * The payload is self-contained (version 2): the resolved agent, the workspace reference (shared
 * path or git repository + base commit), the spec for workers without the workspace, and the
 * labels a worker must carry. Issues adding fields: add them here, optional, in both schemas.
 *
 * Queue job ids are `runId:stepId:attempt` and may not hold more ':' parts, so a trigger
 * sub-agent's job uses the queue step id `<stepId>+trigger` ('+' is not allowed in step ids).
 */
import { z } from 'zod';
import type { Directive } from '../../engine/directive.ts';
import { directiveSchema } from '../../engine/directive.ts';
import { layoutSchema } from '../../engine/layouts/schema.ts';
import type { Telemetry } from '../../engine/model.ts';
import { POSTURES } from '../../engine/workflow/types.ts';
import { InvalidInputError } from '../../errors.ts';
import type { StepChanges } from '../runner/git-changes.ts';

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

/** One reviewer's words for the attempt (see FeedbackEntry in the engine's model). */
export const feedbackItemSchema = z.object({
  kind: z.enum(['changes', 'approval', 'guidance']),
  /** Who: the actor's name, else its id. */
  by: z.string().min(1),
  /** The actor's immutable id (`telegram:42`, `cli:alice`). */
  byId: z.string().min(1),
  at: z.string().min(1),
  text: z.string(),
  /** True when given since the step's previous attempt (what a resumed session is told). */
  fresh: z.boolean(),
});

/** One feedback item of a job payload. */
export type FeedbackItem = z.infer<typeof feedbackItemSchema>;

/** Longest base64 `data` of a `log` report (a 64 KiB chunk). */
const LOG_CHUNK_BASE64_MAX = Math.ceil((64 * 1024) / 3) * 4;

/** Version of the payload below; a worker refuses any other (it may be older or newer). */
export const PAYLOAD_VERSION = 2;

/** A permission posture (a step's `permissions:`, an agent's default). */
const permissionsSchema = z.object({
  posture: z.enum(POSTURES),
  allow: z.array(z.string()).optional(),
  deny: z.array(z.string()).optional(),
  fourEyes: z.boolean().optional(),
  expiresInMs: z.int().positive().optional(),
});

/** Env var names: what an agent definition may pass (values come from the worker's env). */
const envName = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name');

/**
 * The agent as the bridge resolved it when the job was queued: a worker needs no bridge.db.
 * `env` names only; the values are the bridge's (in-process worker) or the worker's own env.
 * `builtin: 'demo'`: the worker starts its own copy of the demo agent (paths differ per machine).
 */
export const jobAgentSchema = z.object({
  name: z.string().min(1),
  engine: z.enum(['command', 'claude', 'codex']),
  argv: z.array(z.string()),
  model: z.string().min(1).optional(),
  timeoutMs: z.number().int().positive().optional(),
  promptVia: z.enum(['stdin', 'file']).optional(),
  env: z.array(envName),
  /** The agent's default permission posture. */
  permissions: permissionsSchema.optional(),
  builtin: z.literal('demo').optional(),
});

/** A job's agent. */
export type JobAgent = z.infer<typeof jobAgentSchema>;

/**
 * Where the agent works. `shared`: the same path on every machine (checked on arrival). `git`:
 * the worker checks out `branch` of `repo` at `baseCommit` in its own work folder, and pushes
 * what the agent committed back to `branch`; `path` is the bridge's copy (names only).
 */
export const workspaceRefSchema = z.discriminatedUnion('mode', [
  z.object({ mode: z.literal('shared'), path: z.string().min(1) }),
  z.object({
    mode: z.literal('git'),
    path: z.string().min(1),
    /** Never starting with '-': git would read it as an option. */
    repo: z.string().regex(/^[^-]/, 'must be a repository URL or path'),
    baseCommit: z.string().regex(/^[0-9a-f]{40}([0-9a-f]{24})?$/, 'must be a full commit id'),
    branch: z
      .string()
      .regex(/^phasebridge\/[A-Za-z0-9][A-Za-z0-9_.-]*(\/[A-Za-z0-9][A-Za-z0-9_.-]*)?$/),
    /** Other commits the job needs (the pushed task commits a step after a tasks step merges). */
    needs: z
      .array(z.string().regex(/^[0-9a-f]{40}([0-9a-f]{24})?$/, 'must be a full commit id'))
      .max(200)
      .optional(),
  }),
]);

/** A job's workspace reference. */
export type WorkspaceRef = z.infer<typeof workspaceRefSchema>;

/** The payload of a step or trigger job (version {@link PAYLOAD_VERSION}). */
export const stepJobPayloadSchema = z.object({
  v: z.literal(PAYLOAD_VERSION),
  kind: z.enum(['step', 'trigger', 'task']),
  /** The task of a `tasks` step (kind 'task' only). */
  taskId: z.string().min(1).optional(),
  /** The workflow step id (without the '+trigger' suffix). */
  stepId: z.string().min(1),
  workspace: workspaceRefSchema,
  layout: layoutSchema,
  agent: jobAgentSchema,
  /** Set when the bridge could not prepare the job (unknown agent, no git remote …): fails it. */
  problem: z.string().min(1).optional(),
  prompt: z.string(),
  /** The run's spec, for workers that do not share the workspace (git mode). */
  spec: z.string().optional(),
  timeoutMs: z.number().int().positive().optional(),
  /** The run has `resumeFromLastStep: false`: a job taken again after its worker died must not run. */
  noResume: z.boolean().optional(),
  /** Chained prompts of the step, run in order in one job; `prompt` is the first. */
  chain: z.array(z.string()).min(2).optional(),
  /** Chain indexes already completed in this visit (a retry or resume goes on from there). */
  chainsDone: z.array(z.number().int().nonnegative()).optional(),
  /** The step's declared permission posture (workflow `permissions:`). */
  permissions: permissionsSchema.optional(),
  /** The bridge allowed `permissions: full` in this workspace (bridge.db; a worker has none). */
  fullAllowed: z.boolean().optional(),
  /**
   * Git mode, codemachine layout: the registry.db row id the bridge registered for this job (the
   * bridge owns registry.db and the agent log; the worker reports this id as its monitoringId).
   */
  monitoringId: z.number().int().positive().optional(),
  /** Labels the worker must carry (the step's `runsOn`). */
  runsOn: z.array(z.string().min(1)).optional(),
  /** Reviewers' feedback for this attempt, oldest first. */
  feedback: z.array(feedbackItemSchema).optional(),
  /** The engine session of the step's previous attempt, resumed with the fresh feedback. */
  resumeSession: z.string().min(1).optional(),
  /**
   * Files the requester attached (workspace-relative paths in the run's inputs folder); in git
   * mode with their bytes (base64), which the worker writes in its work folder.
   */
  inputs: z
    .array(z.object({ path: z.string().min(1).max(500), data: z.base64().optional() }))
    .max(20)
    .optional(),
});

/** A step, trigger or task job's payload. */
export type StepJobPayload = z.infer<typeof stepJobPayloadSchema>;

/** Reads a job payload; InvalidInputError says what is wrong. */
export function parseStepJobPayload(payload: Record<string, unknown>): StepJobPayload {
  if (payload.v !== PAYLOAD_VERSION) {
    const got = payload.v === undefined ? '1 (no version)' : JSON.stringify(payload.v);
    throw new InvalidInputError(
      `job payload version ${got} is not ${PAYLOAD_VERSION}: run the same phasebridge version on the bridge and its workers`,
    );
  }
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

/**
 * The phases of a job on its worker: taken (processor entered), workspace ready, agent process
 * started, agent ended, changes committed, branch pushed (git mode).
 */
export const JOB_PHASES = [
  'picked',
  'ready',
  'agentStart',
  'agentEnd',
  'committed',
  'pushed',
] as const;

/** When a worker reached each phase of a job (epoch ms). */
export type JobTimings = Partial<Record<(typeof JOB_PHASES)[number], number>>;

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
  /** Files the agent changed (paths relative to the workspace; git mode and git workspaces). */
  changedFiles: z.array(z.string()).optional(),
  /** Git mode: what the step changed since its base commit, with line counts (checkpoint message). */
  changes: z
    .object({
      base: z.string().min(1),
      files: z.array(
        z.object({
          path: z.string().min(1),
          added: z.number().int().nonnegative().nullable(),
          removed: z.number().int().nonnegative().nullable(),
        }),
      ),
    })
    .optional(),
  /** Git mode: the commit pushed to the run branch (the next step's base). */
  commit: z
    .string()
    .regex(/^[0-9a-f]{40}([0-9a-f]{24})?$/)
    .optional(),
  /** The worker that ran the job. */
  worker: z.string().optional(),
  /** When the worker reached each phase of the job (epoch ms; diagnostics and benchmarks). */
  timings: z.partialRecord(z.enum(JOB_PHASES), z.number().nonnegative()).optional(),
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
  changedFiles?: string[];
  changes?: StepChanges;
  commit?: string;
  worker?: string;
  timings?: JobTimings;
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
  /** The queue's id of the worker running the job. */
  worker?: string;
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
    worker: z.string().min(1).max(200).optional(),
  }),
  z.object({
    kind: z.literal('session'),
    sessionId: z.string().min(1),
    monitoringId: z.number().int().nonnegative().optional(),
  }),
  z.object({ kind: z.literal('chain'), index: z.number().int().nonnegative() }),
  z.object({ kind: z.literal('progress'), text: z.string() }),
  /** Agent output of a worker that does not share the workspace; the bridge writes the log. */
  z.object({
    kind: z.literal('log'),
    offset: z.number().int().nonnegative(),
    data: z.base64().max(LOG_CHUNK_BASE64_MAX),
  }),
]);

/** A step job's report. */
export type StepReport = z.infer<typeof stepReportSchema>;

/** Reads a report; null for data that is not one (another producer's, a newer version's). */
export function parseStepReport(data: Record<string, unknown>): StepReport | null {
  const parsed = stepReportSchema.safeParse(data);
  return parsed.success ? parsed.data : null;
}
