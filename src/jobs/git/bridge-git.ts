/**
 * The bridge's side of git-mode workspaces. Before a step is queued it names the repository
 * (the workspace's `origin` remote) and the base commit: the run branch `phasebridge/<run id>`
 * in the bridge's workspace, created from HEAD (and pushed) for the run's first step. When a
 * worker reports the commit it pushed, the bridge fetches it and moves its run branch there, so
 * the next step, on any worker, starts from it. The bridge's local branch is the authority: a
 * push left by a worker that died before reporting is simply overwritten by the next attempt.
 */
import fs from 'node:fs';
import path from 'node:path';
import { ConflictError, InvalidInputError } from '../../errors.ts';
import type { WorkspaceRef } from '../orchestrator/job-payload.ts';
import { COMMIT_RE, commitsOf, git, gitProbe, runBranch } from './run-git.ts';

/** Origin URLs already asked for, by workspace, with the .git/config they were read from. */
const origins = new Map<string, { config: string; url: string | null }>();

/**
 * `git remote get-url origin` of `workspace` (null without one). Asked once per run start and per
 * landed result, it is a git process each time (a spawn blocks the bridge's event loop), so the
 * answer is kept while the workspace's own `.git/config` is the same file, same size and time;
 * a workspace whose `.git` is no folder here (a subfolder, a linked worktree) is always asked.
 */
export async function originOf(workspace: string): Promise<string | null> {
  let config: string | null = null;
  try {
    const st = fs.statSync(path.join(workspace, '.git', 'config'));
    config = `${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}`;
  } catch {
    // No .git/config of its own: ask git every time.
  }
  const known = origins.get(workspace);
  if (config !== null && known?.config === config) return known.url;
  const url = await gitProbe(workspace, ['remote', 'get-url', 'origin']);
  if (config !== null) origins.set(workspace, { config, url });
  return url;
}

/** The git workspace reference of the next job of run `runId` in `workspace`. */
export async function gitWorkspaceRef(workspace: string, runId: string): Promise<WorkspaceRef> {
  const repo = await originOf(workspace);
  if (repo === null || repo === '' || repo.startsWith('-')) {
    // Told apart only on this path: a git process per queued job is what the enqueue costs.
    if ((await gitProbe(workspace, ['rev-parse', '--show-toplevel'])) === null) {
      throw new InvalidInputError(
        `workspace ${workspace} is not a git repository, which git workspace mode needs (git init; git remote add origin <url>; or PHASEBRIDGE_WORKSPACE_MODE=shared)`,
      );
    }
    throw new InvalidInputError(
      `workspace ${workspace} has no 'origin' remote for workers to clone (git remote add origin <url>)`,
    );
  }
  const branch = runBranch(runId);
  // The run branch and HEAD in one git process (each spawn blocks the bridge's event loop).
  const [onBranch, head] = await commitsOf(workspace, [`refs/heads/${branch}`, 'HEAD']);
  let base = onBranch ?? null;
  if (base === null) {
    if (head === null || head === undefined) {
      throw new InvalidInputError(
        `workspace ${workspace} has no commit yet: commit something first`,
      );
    }
    // Workers fetch from the remote: the base must be there. The run branch is ours to move.
    await git(workspace, ['push', '--quiet', '--force', repo, `${head}:refs/heads/${branch}`]);
    await git(workspace, ['update-ref', `refs/heads/${branch}`, head]);
    base = head;
  }
  return { mode: 'git', path: workspace, repo, baseCommit: base, branch };
}

/**
 * Fetches `commit` of the run branch from `repo` and moves the bridge's run branch to it.
 * ConflictError when the remote does not hold that commit (another push replaced it before the
 * fetch: the step's work cannot be taken over, so the step fails instead of losing it silently).
 */
export async function landCommit(
  workspace: string,
  repo: string,
  branch: string,
  commit: string,
): Promise<void> {
  if (!COMMIT_RE.test(commit)) throw new InvalidInputError(`not a commit id: ${commit}`);
  const have = async () => (await commitsOf(workspace, [commit]))[0] !== null;
  // The commit is almost never here yet: fetch first (one process instead of a probe too).
  try {
    await git(workspace, [
      'fetch',
      '--quiet',
      '--no-tags',
      '--no-write-fetch-head',
      repo,
      `refs/heads/${branch}`,
    ]);
  } catch (err) {
    if (!(await have())) throw err; // a remote out of reach: only what we hold can land
  }
  try {
    // git refuses a branch at an object it does not hold, or at one that is not a commit.
    await git(workspace, ['update-ref', `refs/heads/${branch}`, commit]);
  } catch (err) {
    if (await have()) throw err;
    throw new ConflictError(
      `commit ${commit.slice(0, 12)} is not on ${branch} of ${repo} any more: the step's work was overwritten`,
    );
  }
}

/**
 * A file as the run branch holds it (what the last step's worker committed), or null when the
 * branch or the file is not there. `file` is workspace-relative without "..", checked by the
 * workflow schema; git reads it from the commit, so no link in the working tree is followed.
 */
export async function readRunBranchFile(
  workspace: string,
  runId: string,
  file: string,
): Promise<string | null> {
  const spec = `refs/heads/${runBranch(runId)}:${file.split(path.sep).join('/')}`;
  try {
    return await git(workspace, ['show', spec]);
  } catch {
    return null;
  }
}
