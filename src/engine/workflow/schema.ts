/**
 * Zod schema of a workflow YAML file. Objects are strict so a typo is an error, never ignored.
 * Cross-field rules (duplicate ids, loop targets, agents, tracks) are checked in load.ts, where
 * every problem is listed together.
 */
import { z } from 'zod';
import { layoutSchema } from '../layouts/schema.ts';
import { DURATION_HINT, parseDuration } from './duration.ts';
import { POSTURES } from './types.ts';

/** Ids of workflows and steps: they appear in job ids (`run:step:attempt`) and file names. */
export const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

const id = z
  .string()
  .regex(ID_PATTERN, 'must start with a letter or digit and use only letters, digits, _ . -');

const duration = z
  .string()
  .refine((s) => parseDuration(s) !== null, { message: `not a duration: ${DURATION_HINT}` });

/** Worker labels (`runsOn`, `phasebridge worker --label`). */
export const LABEL_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
const LABEL_HINT = 'a worker label: a letter or digit, then letters, digits, _ . - (64 at most)';

const names = z.array(z.string().min(1)).min(1, 'must list at least one name');

/** `checkpoint:` of a step. */
export const checkpointFileSchema = z.strictObject({
  when: z.enum(['before', 'after']),
  approvals: z.int().min(1).default(1),
  fourEyes: z.boolean().default(false),
  expiresIn: duration.optional(),
  /** Without it an expired checkpoint stays open ('keep'): nothing is decided in a human's name. */
  onExpiry: z.enum(['reject', 'approve', 'keep']).optional(),
  /** false: no Request changes answer at this checkpoint (default: offered). */
  requestChanges: z.boolean().optional(),
});

const tools = z.array(z.string().min(1)).min(1, 'must list at least one tool');

/** `permissions:` of a step: a posture, or a posture with tool lists. */
export const permissionsFileSchema = z.union([
  z.enum(POSTURES),
  z
    .strictObject({
      mode: z.enum(POSTURES),
      allow: tools.optional(),
      deny: tools.optional(),
      fourEyes: z.boolean().optional(),
      expiresIn: duration.optional(),
    })
    .refine((p) => p.mode === 'ask' || (p.fourEyes === undefined && p.expiresIn === undefined), {
      message: 'fourEyes and expiresIn apply to tool approvals: they need mode "ask"',
    }),
]);

/** One entry of `steps:`. */
export const stepFileSchema = z.strictObject({
  id,
  agent: z.string().min(1),
  /** One prompt, or chained prompts run in order in one agent session (CodeMachine's chains). */
  prompt: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]).optional(),
  promptFile: z.string().min(1).optional(),
  checkpoint: checkpointFileSchema.optional(),
  loop: z.strictObject({ backTo: z.string().min(1), max: z.int().min(1) }).optional(),
  retries: z.strictObject({ count: z.int().min(0), backoff: duration.default('2s') }).optional(),
  timeout: duration.optional(),
  executeOnce: z.boolean().optional(),
  tracks: names.optional(),
  conditions: names.optional(),
  permissions: permissionsFileSchema.optional(),
  /**
   * A parallel tasks step: one job per task of `file` (a JSON task list the previous step's agent
   * wrote, workspace-relative), at most `maxWorkers` at once.
   */
  tasks: z
    .strictObject({
      file: z
        .string()
        .min(1)
        .refine((f) => !f.startsWith('/') && !f.split(/[\\/]/).includes('..'), {
          message: 'must be a path inside the workspace (relative, no "..")',
        }),
      maxWorkers: z.int().min(1).max(64).default(2),
      policy: z.enum(['failFast', 'continue']).default('failFast'),
    })
    .optional(),
  /**
   * Files the step produces for review (workspace-relative, e.g. `plan.md`): its checkpoint's
   * approval is bound to their content (see docs/workflows.md, "Approvals bound to content").
   */
  artifacts: z
    .array(
      z
        .string()
        .min(1)
        .max(512)
        .refine((f) => !f.startsWith('/') && !f.split(/[\\/]/).includes('..'), {
          message: 'must be a path inside the workspace (relative, no "..")',
        }),
    )
    .min(1)
    .max(32)
    .optional(),
  /** Labels a worker must carry to run this step (`phasebridge worker --label gpu`). */
  runsOn: z.array(z.string().regex(LABEL_PATTERN, LABEL_HINT)).min(1).optional(),
});

/** A whole workflow file. `version` is accepted and ignored: the version is a content hash. */
export const workflowFileSchema = z.strictObject({
  id,
  name: z.string().optional(),
  description: z.string().optional(),
  version: z.union([z.string(), z.number()]).optional(),
  layout: layoutSchema.optional(),
  tracks: names.optional(),
  conditions: names.optional(),
  /** Agents a `trigger` directive may start (CodeMachine's agents/agent-config.json). */
  subagents: names.optional(),
  /** Coordinator-layout options: what happens to `.coordinator/` when the run completes. */
  coordinator: z.strictObject({ onComplete: z.enum(['archive', 'remove']) }).optional(),
  steps: z.array(stepFileSchema).min(1, 'a workflow needs at least one step'),
});

/** A workflow file as validated, before prompts are resolved. */
export type WorkflowFile = z.infer<typeof workflowFileSchema>;

/** One step as validated. */
export type StepFile = z.infer<typeof stepFileSchema>;
