/**
 * The content digest of a checkpoint: a sha256 over what its message shows and links to (the
 * step's declared artifacts, the files of its diff against the step's base and the diff file
 * itself, its final answer, and the names of the other entries in the folders of those files,
 * so a file added there later is noticed). Computed at the edge (here), recorded in the run by a
 * `recordCheckpointDigest` command, and computed again on every Approve: a press whose content
 * no longer matches is refused and the message is shown anew (docs/workflows.md, "Approvals bound to content").
 */
import { createHash } from 'node:crypto';
import path from 'node:path';
import type { CheckpointState, RunState } from '../engine/model.ts';
import { stepLogPath } from '../jobs/orchestrator/run-files.ts';
import type { StepChanges } from '../jobs/runner/git-changes.ts';
import { diffFileOf } from '../jobs/runner/git-diff.ts';
import { readChangedFiles } from './changed-files.ts';
import { FileHashCache } from './file-hash-cache.ts';
import { finalAnswer } from './final-answer.ts';

/** Hex digits of the digest that messages show and `approve --digest` accepts at least. */
export const SHORT_DIGEST = 6;
/** Files of a changed-files list hashed at most (the list is a file in the workspace). */
export const MAX_DIGEST_FILES = 20_000;

/** A computed digest, its short form and the parts it was made of (for "what changed"). */
export interface ContentDigest {
  /** sha256, 64 hex digits. */
  digest: string;
  /** "plan.md, 3 files, a1b2c3". */
  label: string;
  /** One entry per part: its name in words ("plan.md", "the final answer") → its hash. */
  parts: ReadonlyMap<string, string>;
  /** The changes record the digest covers (the message lists it). */
  changes?: StepChanges;
}

/** What goes into a digest, already gathered. */
export interface DigestInput {
  workspace: string;
  artifacts: readonly string[];
  changes?: StepChanges | undefined;
  /** The step's diff file (`<log>.diff`), inside the workspace. */
  diffFile?: string | undefined;
  finalAnswer?: string | undefined;
}

/** The digest of `input`, hashing files through `cache`. Pure but for the reads. */
export function digestOf(input: DigestInput, cache: FileHashCache): ContentDigest {
  const parts = new Map<string, string>();
  const lines = ['phasebridge checkpoint digest v2', `base ${input.changes?.base || '-'}`];
  const add = (kind: string, name: string, hash: string) => {
    parts.set(name, hash);
    lines.push(`${kind} ${JSON.stringify(name)} ${hash}`);
  };
  for (const a of input.artifacts) add('artifact', a, cache.hash(input.workspace, a));
  const files = input.changes?.files ?? [];
  const hashed = files.slice(0, MAX_DIGEST_FILES);
  for (const f of hashed) {
    // A declared artifact is hashed once, as the artifact.
    if (!input.artifacts.includes(f.path)) add('file', f.path, cache.hash(input.workspace, f.path));
  }
  if (files.length > MAX_DIGEST_FILES) lines.push(`unhashed ${files.length - MAX_DIGEST_FILES}`);
  const budget = MAX_DIGEST_FILES - hashed.length;
  besideListed(input, [...input.artifacts, ...hashed.map((f) => f.path)], budget, cache, add);
  if (input.diffFile !== undefined)
    add('diff', 'the diff', cache.hash(input.workspace, input.diffFile));
  add('answer', 'the final answer', textHash(input.finalAnswer));
  const digest = createHash('sha256').update(lines.join('\n')).digest('hex');
  const out: ContentDigest = { digest, label: labelOf(input, digest), parts };
  if (input.changes !== undefined) out.changes = input.changes;
  return out;
}

/**
 * The names of every other entry in the folders that hold a listed file (an artifact or a changed
 * file): a file added there after the step's changes were recorded (a late write, a hand edit) is
 * neither declared nor in the changed-files list, and would go unseen otherwise. Names only, so a
 * re-check costs one lstat per folder (its names are re-read only when that moved); the content of
 * a new file counts once the changed-files list, made anew on the mismatch, lists it.
 */
function besideListed(
  input: DigestInput,
  listed: readonly string[],
  budget: number,
  cache: Pick<FileHashCache, 'names'>,
  add: (kind: string, name: string, hash: string) => void,
): void {
  const known = new Set(listed.map((p) => path.normalize(p)));
  const dirs = [...new Set([...known].map((p) => path.dirname(p)))].sort();
  let left = budget;
  for (const dir of dirs) {
    // `dir` is normalized and a name has no separator: plain concatenation is path.join here.
    const prefix = dir === '.' ? '' : `${dir}${path.sep}`;
    for (const name of cache.names(input.workspace, dir)) {
      const rel = prefix + name;
      if (known.has(rel) || input.diffFile === rel) continue;
      if (left-- <= 0) return;
      add('beside', rel, 'present');
    }
  }
}

function textHash(text: string | undefined): string {
  if (text === undefined) return 'none';
  return `sha256:${createHash('sha256').update(text).digest('hex')}`;
}

/** "plan.md, 3 files, a1b2c3": the artifacts (two at most), the diff's file count, the short digest. */
function labelOf(input: DigestInput, digest: string): string {
  const words: string[] = [];
  const shown = input.artifacts.slice(0, 2);
  if (shown.length > 0) {
    const more = input.artifacts.length - shown.length;
    words.push(`${shown.join(', ')}${more > 0 ? ` +${more}` : ''}`);
  }
  const n = input.changes?.base ? input.changes.files.length : undefined;
  if (n !== undefined) words.push(`${n} ${n === 1 ? 'file' : 'files'}`);
  words.push(digest.slice(0, SHORT_DIGEST));
  return words.join(', ');
}

/**
 * What changed between two digests' parts, in words: "plan.md changed", "plan.md and 2 more
 * files changed", "the final answer changed"; generic when the earlier parts are not known.
 */
export function changeWords(
  before: ReadonlyMap<string, string> | undefined,
  after: ReadonlyMap<string, string>,
): string {
  if (before === undefined) return 'the content changed';
  const names = [...new Set([...before.keys(), ...after.keys()])].filter(
    (k) => before.get(k) !== after.get(k),
  );
  if (names.length === 0) return 'the content changed';
  const [first, ...rest] = names;
  if (rest.length === 0) return `${first} changed`;
  return `${first} and ${rest.length} more ${rest.length === 1 ? 'part' : 'parts'} changed`;
}

/** Computes checkpoints' digests with one file cache, and remembers each one's parts. */
export class CheckpointDigests {
  readonly cache = new FileHashCache();
  readonly #parts = new Map<string, ReadonlyMap<string, string>>();

  /** The current digest of `cp` (the step's latest attempt's records). */
  async compute(state: RunState, cp: CheckpointState): Promise<ContentDigest> {
    const def = state.workflow.steps.find((s) => s.id === cp.stepId);
    const step = state.steps.find((s) => s.id === cp.stepId);
    const input: DigestInput = { workspace: state.workspace, artifacts: def?.artifacts ?? [] };
    // A `before` gate's step has not run: only its artifacts (if any exist yet) count.
    if (step !== undefined && step.attempt > 0) {
      const log = stepLogPath(state.workspace, state.id, step.id, step.attempt);
      input.changes = readChangedFiles(state.workspace, log, step.id, step.attempt);
      input.diffFile = diffFileOf(log);
      input.finalAnswer = await finalAnswer(state.workspace, log, step.directive?.reason);
    }
    return digestOf(input, this.cache);
  }

  /** Remembers the parts a checkpoint's recorded digest was made of. */
  remember(runId: string, checkpointId: string, d: ContentDigest): void {
    if (this.#parts.size > 1000) this.#parts.clear();
    this.#parts.set(`${runId}\0${checkpointId}`, d.parts);
  }

  /** The parts remembered for a checkpoint whose digest is `digest`, if they are known. */
  partsOf(runId: string, checkpointId: string): ReadonlyMap<string, string> | undefined {
    return this.#parts.get(`${runId}\0${checkpointId}`);
  }
}
