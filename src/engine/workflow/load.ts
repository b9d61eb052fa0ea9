/**
 * Reading workflow files: YAML → zod → cross-field rules → a resolved Workflow. Every problem is
 * reported at once, each as `<file>: <field path>: <what is wrong>`.
 */
import { createHash } from 'node:crypto';
import path from 'node:path';
import { parseDocument } from 'yaml';
import { InvalidInputError, NotFoundError } from '../../errors.ts';
import {
  isInside,
  READ_LIMITS,
  readRegularFile,
  readTextInside,
  sizeText,
  UnsafePathError,
} from '../ledger/safe-path.ts';
import { parseDuration } from './duration.ts';
import { crossCheck, formatPath, zodProblems } from './problems.ts';
import { type StepFile, type WorkflowFile, workflowFileSchema } from './schema.ts';
import type { AgentPermissions, StepCheckpoint, Workflow, WorkflowStep } from './types.ts';
import { oneYamlError, yamlDepthProblem } from './yaml-limits.ts';

/** Alias expansions allowed in a workflow file: plenty for reuse, far too few for an alias bomb. */
const MAX_ALIAS_COUNT = 100;

/** Options of parseWorkflow. */
export interface ParseOptions {
  /** The file the text came from: named in errors, base of `promptFile` paths. */
  file: string;
  /**
   * The folder every `promptFile` must stay inside (the workspace, or the home's `workflows/`);
   * default: the workflow file's own folder. Prompt files are read without following a link.
   */
  root?: string;
  /** When given, every step's agent must be one of these. */
  knownAgents?: readonly string[];
  /** Reads a prompt file (default: UTF-8, no link followed below `root`); injectable for tests. */
  readPrompt?: (absPath: string) => string;
}

/** Parses and validates workflow YAML; throws InvalidInputError listing every problem. */
export function parseWorkflow(yamlText: string, opts: ParseOptions): Workflow {
  const bytes = Buffer.byteLength(yamlText);
  if (bytes > READ_LIMITS.workflow) {
    throw new InvalidInputError(
      `${opts.file}: (root): YAML error: it is ${sizeText(bytes)}, over the ${sizeText(READ_LIMITS.workflow)} limit for a workflow`,
    );
  }
  const deep = yamlDepthProblem(yamlText);
  if (deep !== null) throw new InvalidInputError(`${opts.file}: (root): YAML error: ${deep}`);
  // logLevel 'error': a YAML warning would reach stderr unformatted; errors are reported below.
  const doc = parseDocument(yamlText, { logLevel: 'error' });
  if (doc.errors.length > 0) {
    const line = oneYamlError(doc.errors.map((e) => e.message));
    throw new InvalidInputError(`${opts.file}: (root): YAML error: ${line}`);
  }
  let raw: unknown;
  try {
    raw = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (err) {
    // yaml throws a ReferenceError when aliases expand past the limit (a "billion laughs" file).
    throw new InvalidInputError(
      `${opts.file}: (root): YAML error: ${(err as Error).message}: use fewer aliases (*name), at most ${MAX_ALIAS_COUNT} expansions`,
    );
  }
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

/** Options of {@link loadWorkflow}. */
export interface LoadOptions {
  knownAgents?: readonly string[];
  /**
   * The trusted folder the workflow came from (a workspace, or the home's `workflows/`): the file
   * is read without following a link below it and its prompt files must stay inside it. Without
   * it the path is the caller's explicit choice and only its prompt files are confined (to its
   * folder).
   */
  root?: string;
}

/** Reads and parses a workflow file; NotFoundError when it does not exist. */
export async function loadWorkflow(file: string, opts: LoadOptions = {}): Promise<Workflow> {
  let text: string | null;
  try {
    text =
      opts.root === undefined
        ? (readRegularFile(file, { limit: READ_LIMITS.workflow, followLink: true })?.toString(
            'utf8',
          ) ?? null)
        : readTextInside(opts.root, file, READ_LIMITS.workflow);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') text = null;
    else if (err instanceof UnsafePathError) throw new InvalidInputError(err.message);
    else throw err;
  }
  if (text === null) throw new NotFoundError(`workflow file not found: ${file}`);
  return parseWorkflow(text, { file, ...opts });
}

interface ResolvedPrompt {
  text: string;
  file?: string;
  chain?: string[];
}

/**
 * Prompt text of each step: inline, or read from `promptFile` next to the workflow file. A
 * prompt file must stay inside the root: a workflow from a cloned repository must not pull
 * `/etc/passwd` or `../../secrets` into a prompt.
 */
function resolvePrompts(
  raw: unknown,
  opts: ParseOptions,
  problems: { path: string; message: string }[],
): ResolvedPrompt[] {
  const steps = (raw as { steps?: unknown } | null)?.steps;
  if (!Array.isArray(steps)) return [];
  const root = path.resolve(opts.root ?? path.dirname(opts.file));
  const read =
    opts.readPrompt ?? ((p: string) => readTextInside(root, p, READ_LIMITS.workflow) ?? missing(p));
  return steps.map((s: unknown, i) => {
    const step = (s ?? {}) as { prompt?: unknown; promptFile?: unknown };
    if (Array.isArray(step.prompt)) {
      const texts = step.prompt.filter((t): t is string => typeof t === 'string');
      return texts.length > 1 ? { text: texts[0]!, chain: texts } : { text: texts[0] ?? '' };
    }
    if (typeof step.promptFile !== 'string' || typeof step.prompt === 'string') {
      return { text: typeof step.prompt === 'string' ? step.prompt : '' };
    }
    const abs = path.resolve(path.dirname(opts.file), step.promptFile);
    if (!isInside(root, abs) || abs === root) {
      const message = `must stay inside ${root} (got "${step.promptFile}")`;
      problems.push({ path: formatPath(['steps', i, 'promptFile']), message });
      return { text: '' };
    }
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

/** The error fs.readFileSync gives for a missing file (kept for its familiar message). */
function missing(p: string): never {
  const err: NodeJS.ErrnoException = new Error(`ENOENT: no such file or directory, open '${p}'`);
  err.code = 'ENOENT';
  throw err;
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
  if (f.subagents !== undefined) wf.subagents = f.subagents;
  if (f.coordinator !== undefined) wf.coordinator = { onComplete: f.coordinator.onComplete };
  return wf;
}

/** Durations were validated by the schema, so parseDuration cannot return null here. */
function ms(text: string): number {
  return parseDuration(text)!;
}

function step(s: StepFile, prompt: ResolvedPrompt): WorkflowStep {
  const out: WorkflowStep = { id: s.id, agent: s.agent, prompt: prompt.text };
  if (prompt.file !== undefined) out.promptFile = prompt.file;
  if (prompt.chain !== undefined) out.chain = prompt.chain;
  if (s.checkpoint) {
    const c = s.checkpoint;
    const cp: StepCheckpoint = {
      when: c.when,
      approvals: c.approvals,
      fourEyes: c.fourEyes,
      onExpiry: c.onExpiry ?? 'keep',
    };
    if (c.expiresIn !== undefined) cp.expiresInMs = ms(c.expiresIn);
    if (c.requestChanges === false) cp.requestChanges = false;
    out.checkpoint = cp;
  }
  if (s.loop) out.loop = { backTo: s.loop.backTo, max: s.loop.max };
  if (s.retries) out.retries = { count: s.retries.count, backoffMs: ms(s.retries.backoff) };
  if (s.timeout !== undefined) out.timeoutMs = ms(s.timeout);
  if (s.executeOnce !== undefined) out.executeOnce = s.executeOnce;
  if (s.tracks !== undefined) out.tracks = s.tracks;
  if (s.conditions !== undefined) out.conditions = s.conditions;
  if (s.tasks !== undefined) out.tasks = { ...s.tasks };
  if (s.permissions !== undefined) out.permissions = permissionsOf(s.permissions);
  if (s.runsOn !== undefined) out.runsOn = [...new Set(s.runsOn)];
  if (s.artifacts !== undefined) out.artifacts = [...new Set(s.artifacts)];
  return out;
}

/** A step's `permissions:` as the runner takes it. */
function permissionsOf(p: NonNullable<StepFile['permissions']>): AgentPermissions {
  if (typeof p === 'string') return { posture: p };
  const out: AgentPermissions = { posture: p.mode };
  if (p.allow !== undefined) out.allow = p.allow;
  if (p.deny !== undefined) out.deny = p.deny;
  if (p.fourEyes !== undefined) out.fourEyes = p.fourEyes;
  if (p.expiresIn !== undefined) out.expiresInMs = ms(p.expiresIn);
  return out;
}
