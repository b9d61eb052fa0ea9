/**
 * Reading workflow files: YAML → zod → cross-field rules → a resolved Workflow. Every problem is
 * reported at once, each as `<file>: <field path>: <what is wrong>`.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parseDocument } from 'yaml';
import { InvalidInputError, NotFoundError } from '../../errors.ts';
import { parseDuration } from './duration.ts';
import { crossCheck, formatPath, zodProblems } from './problems.ts';
import { type StepFile, type WorkflowFile, workflowFileSchema } from './schema.ts';
import type { StepCheckpoint, Workflow, WorkflowStep } from './types.ts';

/** Options of parseWorkflow. */
export interface ParseOptions {
  /** The file the text came from: named in errors, base of `promptFile` paths. */
  file: string;
  /** When given, every step's agent must be one of these. */
  knownAgents?: readonly string[];
  /** Reads a prompt file (default: fs.readFileSync as UTF-8); injectable for tests. */
  readPrompt?: (absPath: string) => string;
}

/** Parses and validates workflow YAML; throws InvalidInputError listing every problem. */
export function parseWorkflow(yamlText: string, opts: ParseOptions): Workflow {
  const doc = parseDocument(yamlText);
  if (doc.errors.length > 0) {
    const first = (message: string) => message.split('\n')[0]!.replace(/:$/, '');
    const lines = doc.errors.map((e) => `${opts.file}: (root): YAML error: ${first(e.message)}`);
    throw new InvalidInputError(lines.join('\n'));
  }
  const raw: unknown = doc.toJS();
  const parsed = workflowFileSchema.safeParse(raw);
  const problems = parsed.success ? [] : zodProblems(parsed.error.issues);
  problems.push(...crossCheck(raw, opts.knownAgents));
  const prompts = resolvePrompts(raw, opts, problems);
  if (problems.length > 0 || !parsed.success) {
    const lines = problems.map((p) => `${opts.file}: ${p.path}: ${p.message}`);
    throw new InvalidInputError(
      `invalid workflow (${lines.length} problem(s)):\n${lines.join('\n')}`,
    );
  }
  const hash = createHash('sha256').update(yamlText);
  for (const p of prompts) if (p.file) hash.update(`\0${p.file}\0${p.text}`);
  return build(parsed.data, prompts, hash.digest('hex').slice(0, 12), path.basename(opts.file));
}

/** Reads and parses a workflow file; NotFoundError when it does not exist. */
export async function loadWorkflow(
  file: string,
  opts: { knownAgents?: readonly string[] } = {},
): Promise<Workflow> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new NotFoundError(`workflow file not found: ${file}`);
    }
    throw err;
  }
  return parseWorkflow(text, { file, ...opts });
}

interface ResolvedPrompt {
  text: string;
  file?: string;
}

/** Prompt text of each step: inline, or read from `promptFile` next to the workflow file. */
function resolvePrompts(
  raw: unknown,
  opts: ParseOptions,
  problems: { path: string; message: string }[],
): ResolvedPrompt[] {
  const steps = (raw as { steps?: unknown } | null)?.steps;
  if (!Array.isArray(steps)) return [];
  const read = opts.readPrompt ?? ((p: string) => readFileSync(p, 'utf8'));
  return steps.map((s: unknown, i) => {
    const step = (s ?? {}) as { prompt?: unknown; promptFile?: unknown };
    if (typeof step.promptFile !== 'string' || typeof step.prompt === 'string') {
      return { text: typeof step.prompt === 'string' ? step.prompt : '' };
    }
    const abs = path.resolve(path.dirname(opts.file), step.promptFile);
    try {
      const text = read(abs);
      if (text.trim() === '') throw new Error('the file is empty');
      return { text, file: step.promptFile };
    } catch (err) {
      const message = `cannot read "${step.promptFile}": ${(err as Error).message}`;
      problems.push({ path: formatPath(['steps', i, 'promptFile']), message });
      return { text: '' };
    }
  });
}

function build(
  f: WorkflowFile,
  prompts: ResolvedPrompt[],
  version: string,
  file: string,
): Workflow {
  const wf: Workflow = {
    id: f.id,
    version,
    file,
    steps: f.steps.map((s, i) => step(s, prompts[i]!)),
  };
  if (f.name !== undefined) wf.name = f.name;
  if (f.description !== undefined) wf.description = f.description;
  if (f.layout !== undefined) wf.layout = f.layout;
  if (f.tracks !== undefined) wf.tracks = f.tracks;
  if (f.conditions !== undefined) wf.conditions = f.conditions;
  return wf;
}

/** Durations were validated by the schema, so parseDuration cannot return null here. */
function ms(text: string): number {
  return parseDuration(text)!;
}

function step(s: StepFile, prompt: ResolvedPrompt): WorkflowStep {
  const out: WorkflowStep = { id: s.id, agent: s.agent, prompt: prompt.text };
  if (prompt.file !== undefined) out.promptFile = prompt.file;
  if (s.checkpoint) {
    const c = s.checkpoint;
    const cp: StepCheckpoint = {
      when: c.when,
      approvals: c.approvals,
      fourEyes: c.fourEyes,
      onExpiry: c.onExpiry ?? 'keep',
    };
    if (c.expiresIn !== undefined) cp.expiresInMs = ms(c.expiresIn);
    out.checkpoint = cp;
  }
  if (s.loop) out.loop = { backTo: s.loop.backTo, max: s.loop.max };
  if (s.retries) out.retries = { count: s.retries.count, backoffMs: ms(s.retries.backoff) };
  if (s.timeout !== undefined) out.timeoutMs = ms(s.timeout);
  if (s.executeOnce !== undefined) out.executeOnce = s.executeOnce;
  if (s.tracks !== undefined) out.tracks = s.tracks;
  if (s.conditions !== undefined) out.conditions = s.conditions;
  return out;
}
