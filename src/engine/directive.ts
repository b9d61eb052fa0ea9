import { z } from 'zod';
import { attestationSchema } from './pabcd/attest.ts';

/** What an agent may ask the workflow to do next, written as JSON to its directive file. */
export const DIRECTIVE_ACTIONS = [
  'continue',
  'loop',
  'checkpoint',
  'trigger',
  'stop',
  'error',
  'pause',
] as const;

/** One directive action (CodeMachine's set plus `pause`). */
export type DirectiveAction = (typeof DIRECTIVE_ACTIONS)[number];

/** Most files one directive may send to the chat. */
export const DIRECTIVE_FILES_MAX = 10;

/**
 * Why a `files` entry is not a plain path inside the workspace, or undefined. Checked on the text
 * alone (links, size and existence are checked when the file is read, see chatops/agent-files.ts).
 */
export function directiveFileProblem(p: string): string | undefined {
  if (p.includes('\0')) return 'must not contain a NUL byte';
  if (p.startsWith('/') || p.startsWith('\\') || /^[A-Za-z]:/.test(p)) {
    return 'must be a path relative to the workspace, not an absolute one';
  }
  if (p.split(/[\\/]/).includes('..')) return "must stay inside the workspace (no '..')";
  return undefined;
}

const directiveFile = z
  .string()
  .min(1)
  .max(500)
  .check((ctx) => {
    const problem = directiveFileProblem(ctx.value);
    if (problem !== undefined)
      ctx.issues.push({ code: 'custom', message: problem, input: ctx.value });
  });

/** Zod schema of a directive file; unknown keys are refused so typos are not silently ignored. */
export const directiveSchema = z
  .strictObject({
    action: z.enum(DIRECTIVE_ACTIONS),
    reason: z.string().max(4000).optional(),
    triggerAgentId: z.string().min(1).optional(),
    /** Files (workspace-relative) to send to the chat with the step's checkpoint. */
    files: z.array(directiveFile).max(DIRECTIVE_FILES_MAX).optional(),
    /** Evidence for a PABCD gate (codexclaw-layout runs); see pabcd/attest.ts. */
    attest: attestationSchema.optional(),
    /** What a task's agent produced (`tasks` steps): shown with the task and kept in its state. */
    result: z
      .strictObject({
        branch: z.string().min(1).max(200).optional(),
        pr: z.int().positive().optional(),
        commit: z
          .string()
          .regex(/^[0-9a-f]{7,40}$/, 'must be a git commit hash')
          .optional(),
      })
      .optional(),
    /** What a verify step measured (coordinator layout: `verification` in state.json). */
    verification: z
      .strictObject({
        testsTotal: z.int().nonnegative(),
        testsPassed: z.int().nonnegative(),
        buildStatus: z.enum(['passed', 'failed']),
      })
      .optional(),
  })
  .refine((d) => d.action !== 'trigger' || d.triggerAgentId !== undefined, {
    message: 'action "trigger" needs "triggerAgentId"',
    path: ['triggerAgentId'],
  });

/** A validated directive. */
export type Directive = z.infer<typeof directiveSchema>;

/** The directive every step starts with (CodeMachine resets the file to this before each step). */
export const DEFAULT_DIRECTIVE: Directive = Object.freeze({ action: 'continue' });

/** Result of parsing a directive file's text: a directive, or why it is invalid. */
export type DirectiveParse = { ok: true; directive: Directive } | { ok: false; error: string };

/** Parses directive file text; invalid JSON or shape is an error, never a silent `continue`. */
export function parseDirective(text: string): DirectiveParse {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    return { ok: false, error: `directive file is not valid JSON: ${(err as Error).message}` };
  }
  const parsed = directiveSchema.safeParse(raw);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
    return { ok: false, error: `invalid directive: ${issues.join('; ')}` };
  }
  return { ok: true, directive: parsed.data };
}
