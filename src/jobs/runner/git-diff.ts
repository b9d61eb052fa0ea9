/**
 * What a step changed in a git workspace, for the console's per-step diff. Before the agent runs
 * and after it ends, the workspace's files are written as a git tree object through a private
 * index file (GIT_INDEX_FILE, seeded from the repository's own index so unchanged files are not
 * hashed again): the user's index, HEAD, branches and working tree are never touched, only
 * loose objects are added (git gc removes them). The diff of the two trees is saved beside the
 * step's log. git runs with argv arrays; a workspace that is not a git work tree, or a git that
 * is missing or fails, yields no diff and never fails the step.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** Run folders of the layouts: bookkeeping, not the agent's work. */
const EXCLUDED = ['.phasebridge', '.codemachine', '.codexclaw'].map((d) => `:(exclude)${d}`);
/** A diff larger than this is cut (with a note): the console shows it in a page. */
export const MAX_DIFF_BYTES = 1024 * 1024;
const GIT_TIMEOUT_MS = 30_000;

function git(cwd: string, args: string[], env?: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      'git',
      args,
      {
        cwd,
        env: { ...process.env, ...env, GIT_TERMINAL_PROMPT: '0' },
        timeout: GIT_TIMEOUT_MS,
        maxBuffer: MAX_DIFF_BYTES * 4,
        encoding: 'utf8',
      },
      (err, stdout) => (err ? reject(err) : resolve(stdout)),
    );
  });
}

/** True when `dir` or a folder above it holds `.git` (checked without starting git). */
function inGitTree(dir: string): boolean {
  for (let d = path.resolve(dir); ; d = path.dirname(d)) {
    if (fs.existsSync(path.join(d, '.git'))) return true;
    if (path.dirname(d) === d) return false;
  }
}

/** The workspace's files as a git tree id, or null when it is not in a git work tree. */
export async function snapshotTree(workspace: string): Promise<string | null> {
  // Most workspaces are not repositories: they cost a few stat calls, no process.
  if (!inGitTree(workspace)) return null;
  try {
    if ((await git(workspace, ['rev-parse', '--is-inside-work-tree'])).trim() !== 'true') {
      return null;
    }
    const own = path.resolve(
      workspace,
      (await git(workspace, ['rev-parse', '--git-path', 'index'])).trim(),
    );
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-snap-'));
    try {
      const index = path.join(tmp, 'index');
      if (fs.existsSync(own)) fs.copyFileSync(own, index);
      const env = { GIT_INDEX_FILE: index };
      await git(workspace, ['add', '-A', '--', '.', ...EXCLUDED], env);
      return (await git(workspace, ['write-tree'], env)).trim() || null;
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  } catch {
    return null;
  }
}

/**
 * Writes the diff between the tree `before` and the workspace now to `file` (UTF-8 text, cut at
 * MAX_DIFF_BYTES). Returns false when no diff could be made.
 */
export async function writeStepDiff(
  workspace: string,
  before: string,
  file: string,
): Promise<boolean> {
  const after = await snapshotTree(workspace);
  if (after === null) return false;
  try {
    let text = await git(workspace, [
      'diff',
      '--no-color',
      '--no-ext-diff',
      '--stat',
      '--patch',
      before,
      after,
    ]);
    if (Buffer.byteLength(text) > MAX_DIFF_BYTES) {
      text = `${Buffer.from(text).subarray(0, MAX_DIFF_BYTES).toString('utf8')}\n[phasebridge] diff cut at ${MAX_DIFF_BYTES} bytes\n`;
    }
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, text === '' ? '' : text, { mode: 0o600 });
    return true;
  } catch {
    return false;
  }
}

/** The diff file of a step log (`plan-1.log` → `plan-1.diff`). */
export function diffFileOf(logFile: string): string {
  return `${logFile.replace(/\.log$/, '')}.diff`;
}
