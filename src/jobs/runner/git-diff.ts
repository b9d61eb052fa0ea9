/**
 * What a step changed in a git workspace, for the console's per-step diff. Before the agent runs
 * and after it ends, the workspace's files are written as a git tree object through a private
 * index file (GIT_INDEX_FILE, seeded from the repository's own index so unchanged files are not
 * hashed again): the user's index, HEAD, branches and working tree are never touched, only
 * loose objects are added (git gc removes them). The diff of the two trees is saved beside the
 * step's log. git runs with argv arrays. A folder that is no git work tree has no diff and
 * nothing to say; a snapshot that fails (or leaves paths out) says why, and never fails the step.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { RUN_FOLDERS } from './run-folders.ts';

const EXCLUDED = RUN_FOLDERS.map((d) => `:(exclude)${d}`);
/** A diff larger than this is cut (with a note): the console shows it in a page. */
export const MAX_DIFF_BYTES = 1024 * 1024;
const GIT_TIMEOUT_MS = 30_000;

/** The workspace's files as a git tree, or why there is none. */
export interface Snapshot {
  /** The tree id; null when there is no snapshot. */
  tree: string | null;
  /** Why there is no tree although the folder is in a git work tree ("git add: …"). */
  problem?: string;
  /** Paths git refused to add, with its reason; the tree holds everything else. */
  leftOut?: string[];
}

/** How one git process ended. */
interface GitEnd {
  code: number;
  stdout: string;
  stderr: string;
  /** Set when git could not run or was killed: the reason in words. */
  failure?: string;
}

function git(cwd: string, args: string[], env?: NodeJS.ProcessEnv): Promise<GitEnd> {
  return new Promise((resolve) => {
    execFile(
      'git',
      args,
      {
        cwd,
        // LC_ALL=C: git's messages are parsed below, and quoted to the user as they are.
        env: { ...process.env, ...env, GIT_TERMINAL_PROMPT: '0', LC_ALL: 'C' },
        timeout: GIT_TIMEOUT_MS,
        maxBuffer: MAX_DIFF_BYTES * 4,
        encoding: 'utf8',
      },
      (err, stdout, stderr) => {
        if (err === null) return resolve({ code: 0, stdout, stderr });
        const e = err as NodeJS.ErrnoException & { killed?: boolean };
        if (e.code === 'ENOENT') {
          return resolve({ code: -1, stdout, stderr, failure: 'git is not installed' });
        }
        if (e.killed) {
          const s = GIT_TIMEOUT_MS / 1000;
          return resolve({ code: -1, stdout, stderr, failure: `git timed out after ${s} s` });
        }
        const code = typeof e.code === 'number' ? e.code : -1;
        resolve({ code, stdout, stderr, failure: code === -1 ? e.message : undefined });
      },
    );
  });
}

/** git's own reason for a failure: its first fatal/error line, else how it ended. */
function reasonOf(what: string, end: GitEnd): string {
  if (end.failure !== undefined) return `${what}: ${end.failure}`;
  const line = end.stderr.split('\n').find((l) => /^(fatal|error): /.test(l));
  return `${what}: ${line?.replace(/^(fatal|error): /, '') ?? `git exited with ${end.code}`}`;
}

/** True when `dir` or a folder above it holds `.git` (checked without starting git). */
function inGitTree(dir: string): boolean {
  for (let d = path.resolve(dir); ; d = path.dirname(d)) {
    if (fs.existsSync(path.join(d, '.git'))) return true;
    if (path.dirname(d) === d) return false;
  }
}

/**
 * Stages the workspace into the private index. `--ignore-errors`: a path git refuses (an empty
 * nested repository) is left out, not the whole snapshot. Exit 1 then means "staged all it
 * could": git says so for refused paths ("error: …", returned) and also when an excluded run
 * folder is in .gitignore ("paths are ignored", harmless: they are excluded anyway).
 */
async function stageAll(workspace: string, env: NodeJS.ProcessEnv): Promise<string[] | string> {
  const end = await git(
    workspace,
    [
      '-c',
      'advice.addIgnoredFile=false',
      '-c',
      'advice.addEmbeddedRepo=false',
      'add',
      '-A',
      '--ignore-errors',
      '--',
      '.',
      ...EXCLUDED,
    ],
    env,
  );
  if (end.code !== 0 && end.code !== 1) return reasonOf('git add', end);
  return end.stderr
    .split('\n')
    .filter((l) => l.startsWith('error: '))
    .map((l) => l.slice('error: '.length));
}

/** The workspace's files as a git tree; `{ tree: null }` alone when it is no git work tree. */
export async function snapshotTree(workspace: string): Promise<Snapshot> {
  // Most workspaces are not repositories: they cost a few stat calls, no process.
  if (!inGitTree(workspace)) return { tree: null };
  const inside = await git(workspace, [
    'rev-parse',
    '--is-inside-work-tree',
    '--git-path',
    'index',
  ]);
  const [isWorkTree, indexPath] = inside.stdout.trim().split('\n');
  if (inside.code !== 0 || isWorkTree !== 'true' || indexPath === undefined) {
    // Inside a `.git` folder, or a `.git` that is no repository: no work tree, nothing to say.
    if (isWorkTree === 'false' || /not a git repository/i.test(inside.stderr))
      return { tree: null };
    // Anything else (a repository git refuses, "dubious ownership", …) is said.
    return { tree: null, problem: reasonOf('git rev-parse', inside) };
  }
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-snap-'));
  try {
    const index = path.join(tmp, 'index');
    const own = path.resolve(workspace, indexPath);
    if (fs.existsSync(own)) fs.copyFileSync(own, index);
    const env = { GIT_INDEX_FILE: index };
    const staged = await stageAll(workspace, env);
    if (typeof staged === 'string') return { tree: null, problem: staged };
    const written = await git(workspace, ['write-tree'], env);
    const tree = written.stdout.trim();
    if (written.code !== 0 || tree === '') {
      return { tree: null, problem: reasonOf('git write-tree', written) };
    }
    return staged.length > 0 ? { tree, leftOut: staged } : { tree };
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

/**
 * Writes the diff between the trees `before` and `after` to `file` (UTF-8 text, cut at
 * MAX_DIFF_BYTES). Returns why no diff could be made, or undefined when it was written.
 */
export async function writeStepDiff(
  workspace: string,
  before: string,
  after: string,
  file: string,
): Promise<string | undefined> {
  const end = await git(workspace, [
    'diff',
    '--no-color',
    '--no-ext-diff',
    '--stat',
    '--patch',
    before,
    after,
  ]);
  if (end.code !== 0) return reasonOf('git diff', end);
  let text = end.stdout;
  if (Buffer.byteLength(text) > MAX_DIFF_BYTES) {
    text = `${Buffer.from(text).subarray(0, MAX_DIFF_BYTES).toString('utf8')}\n[phasebridge] diff cut at ${MAX_DIFF_BYTES} bytes\n`;
  }
  writeDiffFile(file, text);
  return undefined;
}

/** Writes a diff file (or the note of why there is none), readable by the owner only. */
export function writeDiffFile(file: string, text: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text, { mode: 0o600 });
}

/** The diff file of a step log (`plan-1.log` → `plan-1.diff`). */
export function diffFileOf(logFile: string): string {
  return `${logFile.replace(/\.log$/, '')}.diff`;
}
