/**
 * What a step changed in a git workspace: the commit when the step started, and after it the
 * files that differ from it (`git diff --numstat <base>`: committed and uncommitted changes of
 * tracked files) plus untracked new files. Written as `changes-<step>-<attempt>.json` beside the
 * step's log, so the checkpoint message can list them. git runs with an argv array, never a
 * shell; a workspace that is not a git repository simply has no list, and a git that fails is
 * named in the file's note.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { writeFileAtomic } from '../../engine/ledger/atomic-write.ts';
import { confinedRoot } from './output-sink.ts';
import { inRunFolder } from './run-folders.ts';

/** One changed file: lines added and removed (null for binary files). */
export interface FileChange {
  path: string;
  added: number | null;
  removed: number | null;
}

/** The stored changes of a step attempt. */
export interface StepChanges {
  /** The commit the step started from; '' when there is no list, only the note. */
  base: string;
  files: FileChange[];
  /** What the list or the step's diff lacks and why ("no diff: …"), shown under the files. */
  note?: string;
}

function git(cwd: string, args: string[]): Promise<string | null> {
  return gitOrReason(cwd, args).then((r) => (r.ok ? r.out : null));
}

function gitOrReason(
  cwd: string,
  args: string[],
): Promise<{ ok: true; out: string } | { ok: false; reason: string }> {
  return new Promise((resolve) => {
    execFile(
      'git',
      args,
      {
        cwd,
        timeout: 10_000,
        maxBuffer: 4 * 1024 * 1024,
        env: { ...process.env, GIT_OPTIONAL_LOCKS: '0', LC_ALL: 'C' },
        encoding: 'utf8',
      },
      (err, stdout, stderr) => {
        if (err === null) return resolve({ ok: true, out: stdout });
        const line = stderr.split('\n').find((l) => /^(fatal|error): /.test(l));
        resolve({ ok: false, reason: line?.replace(/^(fatal|error): /, '') ?? err.message });
      },
    );
  });
}

/** The workspace's HEAD commit, or null when it is no git repository (or has no commit). */
export async function gitHead(workspace: string): Promise<string | null> {
  const out = await git(workspace, ['rev-parse', '--verify', '--quiet', 'HEAD']);
  const head = out?.trim();
  return head && /^[0-9a-f]{7,64}$/.test(head) ? head : null;
}

const count = (s: string): number | null => (s === '-' ? null : Number.parseInt(s, 10));

/** The files of `git diff --numstat --no-renames -z` output. */
export function parseNumstat(numstat: string): FileChange[] {
  const files: FileChange[] = [];
  for (const rec of numstat.split('\0')) {
    const m = /^(\d+|-)\t(\d+|-)\t(.+)$/s.exec(rec);
    if (m) files.push({ path: m[3]!, added: count(m[1]!), removed: count(m[2]!) });
  }
  return files;
}

/** The files that differ from `base` now, and untracked new ones; or why git could not say. */
export async function gitChanges(workspace: string, base: string): Promise<StepChanges | string> {
  const numstat = await gitOrReason(workspace, [
    'diff',
    '--numstat',
    '--no-renames',
    '-z',
    base,
    '--',
  ]);
  if (!numstat.ok) return `git diff: ${numstat.reason}`;
  const untracked = await gitOrReason(workspace, [
    'ls-files',
    '--others',
    '--exclude-standard',
    '-z',
  ]);
  if (!untracked.ok) return `git ls-files: ${untracked.reason}`;
  const files = parseNumstat(numstat.out);
  for (const p of untracked.out.split('\0')) {
    if (p !== '') files.push({ path: p, added: null, removed: null });
  }
  return { base, files: files.filter((f) => !inRunFolder(f.path)) };
}

/** Path of the changes file of an attempt: `<logdir>/changes-<step>-<attempt>.json`. */
export function changesFilePath(logFile: string, stepId: string, attempt: number): string {
  const step = stepId.replace(/[^A-Za-z0-9._-]/g, '_');
  return path.join(path.dirname(logFile), `changes-${step}-${attempt}.json`);
}

/** Writes the changes file (inside the workspace). */
export function writeChangesFile(workspace: string, file: string, changes: StepChanges): void {
  writeFileAtomic(file, `${JSON.stringify(changes)}\n`, {
    root: confinedRoot(workspace, file),
    mkdirs: true,
    mode: 0o600,
  });
}

/**
 * Writes what the step changed since `base` beside its log (best effort: a listing only), with
 * `note` (why the diff is missing or partial). Without a base (a repository with no commit yet)
 * only a note is worth a file. Returns why the listing failed, if it did.
 */
export async function recordChanges(
  workspace: string,
  logFile: string,
  stepId: string,
  attempt: number,
  base: string | null,
  note?: string,
): Promise<string | undefined> {
  let problem: string | undefined;
  let changes: StepChanges | undefined;
  if (base !== null) {
    const listed = await gitChanges(workspace, base);
    if (typeof listed === 'string') problem = `no changed-files list: ${listed}`;
    else changes = listed;
  }
  const said = [note, problem].filter((n) => n !== undefined).join('; ');
  if (changes === undefined && said === '') return undefined;
  const out: StepChanges = changes ?? { base: '', files: [] };
  if (said !== '') out.note = said;
  try {
    writeChangesFile(workspace, changesFilePath(logFile, stepId, attempt), out);
  } catch {
    // The checkpoint message then lists no files; the step's outcome does not depend on it.
  }
  return problem;
}
