/**
 * Runs git with an argv array (never a shell), for git-mode workspaces. Credentials are whatever
 * the process's own environment gives git (ssh agent, credential helper, GIT_* variables): none
 * travel in jobs. Prompts are disabled so a missing credential fails instead of hanging.
 */
import { execFile } from 'node:child_process';
import { ResourceError } from '../../errors.ts';

/** Output cap of one git command (ls-files of a big repository stays well under it). */
const MAX_BUFFER = 32 * 1024 * 1024;

/** Runs `git ...args` in `cwd`; resolves with stdout, rejects with a ResourceError naming it. */
export function git(
  cwd: string,
  args: readonly string[],
  env?: NodeJS.ProcessEnv,
  input?: string,
): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      'git',
      [...args],
      {
        cwd,
        maxBuffer: MAX_BUFFER,
        env: { ...(env ?? process.env), GIT_TERMINAL_PROMPT: '0', LC_ALL: 'C' },
      },
      (err, stdout, stderr) => {
        if (err === null) return resolve(stdout);
        // Some refusals are on stdout only (commit: "nothing to commit").
        const why = (stderr.trim() || stdout.trim() || err.message)
          .trim()
          .split('\n')
          .slice(-3)
          .join(' | ');
        reject(new ResourceError(`git ${args[0]} failed in ${cwd}: ${why}`, { cause: err }));
      },
    );
    // A closed stdin is what commands that read it (cat-file --batch-check) stop at.
    child.stdin?.on('error', () => {}); // git may exit before reading (then the callback says why)
    child.stdin?.end(input ?? '');
  });
}

/**
 * Which of `revs` name a commit in `cwd`, in ONE git process (each probe is a process spawn,
 * which blocks the event loop for milliseconds): the commit id of each, or null.
 */
export async function commitsOf(cwd: string, revs: readonly string[]): Promise<(string | null)[]> {
  // A name with a newline would split into two queries: never a commit.
  const ok = revs.map((r) => !/[\n\r]/.test(r));
  const query = revs.filter((_, i) => ok[i]).map((r) => `${r}^{commit}\n`);
  const out = (
    await git(
      cwd,
      ['cat-file', '--batch-check=%(objectname) %(objecttype)'],
      undefined,
      query.join(''),
    )
  ).split('\n');
  let line = 0;
  return ok.map((good) => {
    if (!good) return null;
    const [id, type] = (out[line++] ?? '').split(' ');
    return type === 'commit' && id !== undefined && COMMIT_RE.test(id) ? id : null;
  });
}

/** `git ...args` output, trimmed; null when the command fails (a probe, not an action). */
export async function gitProbe(cwd: string, args: readonly string[]): Promise<string | null> {
  try {
    return (await git(cwd, args)).trim();
  } catch {
    return null;
  }
}

/** A full commit id. */
export const COMMIT_RE = /^[0-9a-f]{40}([0-9a-f]{24})?$/;

/** The run branch of a run in git mode. */
export function runBranch(runId: string): string {
  return `phasebridge/${runId}`;
}

/**
 * The branch a task of a `tasks` step works on in git mode: `phasebridge/<run id>-tasks/<task
 * id>` (beside the run branch: git cannot hold both `a` and `a/b` as branches). Each parallel
 * task pushes its own branch; the run branch stays at the tasks step's base for the next step.
 */
export function taskBranch(runId: string, taskId: string): string {
  return `phasebridge/${runId}-tasks/${taskId}`;
}

/** Why `taskId` cannot name a git branch (`..`, a `.lock` or `.` ending), or null. */
export function taskBranchProblem(taskId: string): string | null {
  if (taskId.includes('..') || taskId.endsWith('.lock') || taskId.endsWith('.')) {
    return `task id ${taskId} cannot name a git branch (no "..", no ".lock" or "." at the end)`;
  }
  return null;
}
