/**
 * The worker's side of git-mode workspaces: a cache of bare clones (one per repository URL)
 * and one work folder per run, a worktree of the cache on the run branch. A job checks the run
 * branch out at the job's base commit (whatever an earlier attempt left there is discarded),
 * runs the agent, commits what changed and force-pushes the run branch in one ref update, so a
 * worker killed at any point leaves either the old branch or the complete new commit.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { InvalidInputError } from '../../errors.ts';
import { makeDirs } from '../../fs-errors.ts';
import { type FileChange, parseNumstat } from '../runner/git-changes.ts';
import { GitBatchCheck } from './git-batch.ts';
import { git, gitProbe } from './run-git.ts';

/** The git reference of a job (the `git` form of the payload's workspace). */
export interface GitJobRef {
  repo: string;
  baseCommit: string;
  branch: string;
  /** Further commits the job needs in its clone (task commits a merge step works with). */
  needs?: string[];
}

/** Paths the commit leaves out: phasebridge's own run folder (logs, spec, directive). */
const NEVER_COMMITTED = ['.phasebridge'];

/**
 * The clone cache's `info/exclude` (shared by its work folders): `git add --all` then leaves
 * phasebridge's own untracked files alone, so the reset after it is needed only when something
 * left out was staged anyway (a tracked file of ours changed, a layout file).
 */
const CACHE_EXCLUDE = '/.phasebridge/\n';

/**
 * Whether `git add --verbose` output (`add 'x'`, `remove 'x'`) staged any path under `paths`;
 * true as well for a line it cannot read (a quoted name), so the reset runs.
 */
export function stagedAnyOf(addOutput: string, paths: readonly string[]): boolean {
  for (const line of addOutput.split('\n')) {
    if (line === '') continue;
    const m = /^(?:add|remove) '([^'\\"]*)'$/.exec(line);
    if (!m) return true;
    const staged = m[1]!;
    if (paths.some((p) => staged === p || staged.startsWith(`${p}/`))) return true;
  }
  return false;
}

/** Serialises work on one cache (git takes ref locks; parallel fetches into one repo fail). */
class Mutex {
  #tail: Promise<unknown> = Promise.resolve();
  run<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.#tail.then(fn, fn);
    this.#tail = next.catch(() => {});
    return next;
  }
}

/** Clone cache and work folders of one worker under `root` (its home's `work/`). */
export class GitWorkFolders {
  readonly #root: string;
  readonly #locks = new Map<string, Mutex>();
  readonly #identity = new Map<string, boolean>();
  /** One long-lived commit-probe process per clone cache. */
  readonly #probes = new Map<string, GitBatchCheck>();
  /** Caches whose info/exclude was checked by this process. */
  readonly #excluded = new Set<string>();

  constructor(root: string) {
    this.#root = root;
  }

  #lockOf(dir: string): Mutex {
    let lock = this.#locks.get(dir);
    if (lock === undefined) {
      lock = new Mutex();
      this.#locks.set(dir, lock);
    }
    return lock;
  }

  /**
   * The bare clone of `repo` in the cache, fetched so it holds `commit` and every commit of
   * `needs` (then the branches that hold them are there too, as `origin/<branch>`). A commit
   * this cache already holds (the worker pushed it, or fetched it for an earlier job) costs no
   * fetch; otherwise only the job's branch is fetched first, and every branch when that is not
   * enough (a task's base is on the run branch, a stray push replaced the branch).
   */
  async #cache(repo: string, ref: GitJobRef): Promise<string> {
    const { baseCommit: commit, needs = [] } = ref;
    const dir = path.join(
      this.#root,
      'cache',
      `${createHash('sha256').update(repo).digest('hex').slice(0, 16)}.git`,
    );
    const missing = async () => {
      const all = [commit, ...needs];
      let probe = this.#probes.get(dir);
      if (probe === undefined) {
        probe = new GitBatchCheck(dir);
        this.#probes.set(dir, probe);
      }
      const found = await probe.commitsOf(all);
      return all.filter((_, i) => found[i] === null);
    };
    const fetch = (refspec: string) =>
      git(dir, ['fetch', '--quiet', '--no-tags', '--prune', repo, refspec]);
    await this.#lockOf(dir).run(async () => {
      let fresh = false;
      if (!fs.existsSync(path.join(dir, 'HEAD'))) {
        makeDirs(dir, 0o700);
        await git(dir, ['init', '--quiet', '--bare']);
        fresh = true;
      }
      this.#excludeOwnFiles(dir);
      // A job with `needs` always fetches: it works with branches other workers pushed.
      if (needs.length === 0) {
        if (!fresh && (await missing()).length === 0) return;
        await fetch(`+refs/heads/${ref.branch}:refs/remotes/origin/${ref.branch}`).catch(
          () => {}, // not on the remote (yet): every branch is fetched next
        );
        if ((await missing()).length === 0) return;
      }
      await fetch('+refs/heads/*:refs/remotes/origin/*');
      const still = await missing();
      if (still.includes(commit)) {
        throw new InvalidInputError(
          `base commit ${commit.slice(0, 12)} is not on any branch of ${repo}`,
        );
      }
      if (still.length > 0) {
        throw new InvalidInputError(
          `commit ${still[0]!.slice(0, 12)} the job needs is not on any branch of ${repo}`,
        );
      }
    });
    return dir;
  }

  /**
   * The work folder `folder` (the run id; `<run id>+task+<task id>` for a task, so parallel
   * tasks never share one), on the job's branch at the base commit, clean except for
   * phasebridge's own folder (its logs tell a re-take what happened before).
   */
  async checkout(folder: string, ref: GitJobRef): Promise<string> {
    const cache = await this.#cache(ref.repo, ref);
    const dir = path.join(this.#root, 'runs', folder);
    if (fs.existsSync(path.join(dir, '.git'))) {
      await git(dir, ['checkout', '--quiet', '--force', '-B', ref.branch, ref.baseCommit]);
      await git(dir, ['clean', '--quiet', '-ffdx', '-e', '/.phasebridge/']);
      return dir;
    }
    makeDirs(path.dirname(dir), 0o700);
    fs.rmSync(dir, { recursive: true, force: true });
    const add = ['worktree', 'add', '--quiet', '--force', '-B', ref.branch, dir, ref.baseCommit];
    // Parallel tasks add worktrees to one cache: one at a time (git locks its admin files).
    await this.#lockOf(cache).run(async () => {
      try {
        await git(cache, add);
      } catch {
        // A work folder removed by hand leaves a stale worktree entry holding the branch.
        await git(cache, ['worktree', 'prune']);
        await git(cache, add);
      }
    });
    return dir;
  }

  /**
   * Commits everything the agent changed (except phasebridge's files and `exclude`), pushes the
   * run branch, and returns the commit and the changed files (relative paths, and with their
   * added/removed line counts for the checkpoint message). Usually three git processes and the
   * push: add (a reset after it only when it staged one of ours), commit (which says when there
   * is nothing to commit), and one `show` for the commit id and its line counts.
   */
  async commitAndPush(
    dir: string,
    ref: GitJobRef,
    message: string,
    exclude: readonly string[],
    onCommitted?: () => void,
  ): Promise<{ commit: string; changedFiles: string[]; fileChanges: FileChange[] }> {
    const left = [...NEVER_COMMITTED, ...exclude];
    const added = await git(dir, [
      '-c',
      'core.quotepath=off',
      'add',
      '--all',
      '--verbose',
      '--',
      '.',
    ]);
    // Back to the base for phasebridge's own files (an exclude pathspec fails on ignored paths);
    // usually none was staged (CACHE_EXCLUDE), and one git process less per job.
    if (stagedAnyOf(added, left)) {
      await git(dir, ['reset', '--quiet', ref.baseCommit, '--', ...left]);
    }
    const who = (await this.#hasIdentity(dir))
      ? []
      : ['-c', 'user.name=phasebridge', '-c', 'user.email=phasebridge@localhost'];
    let committed = true;
    try {
      await git(dir, [...who, 'commit', '--quiet', '--no-verify', '-m', message]);
    } catch (err) {
      // Nothing staged: git says so and exits 1; the base is the step's commit then.
      if (!/nothing (added )?to commit|no changes added to commit/.test((err as Error).message)) {
        throw err;
      }
      committed = false;
    }
    let commit: string | null = null;
    let fileChanges: FileChange[] = [];
    if (committed) {
      // Usually HEAD's only parent is the base: then its own diff is the step's (one process).
      const out = await git(dir, [
        'show',
        '--no-renames',
        '--numstat',
        '-z',
        '--format=%H %P',
        'HEAD',
      ]);
      const nul = out.indexOf('\0');
      const [id, ...parents] = out.slice(0, nul).split(' ');
      if (parents.length === 1 && parents[0] === ref.baseCommit) {
        commit = id!;
        fileChanges = parseNumstat(out.slice(nul + 1).replace(/^\n/, ''));
      }
    }
    if (commit === null) {
      // The agent committed itself (a merge step): the step's diff is from the base to HEAD.
      commit = (await git(dir, ['rev-parse', 'HEAD'])).trim();
      if (commit !== ref.baseCommit) {
        fileChanges = parseNumstat(
          await git(dir, ['diff', '--numstat', '--no-renames', '-z', ref.baseCommit, commit]),
        );
      }
    }
    onCommitted?.();
    await git(dir, ['push', '--quiet', '--force', ref.repo, `${commit}:refs/heads/${ref.branch}`]);
    return { commit, changedFiles: fileChanges.map((f) => f.path), fileChanges };
  }

  /** Adds CACHE_EXCLUDE to the cache's info/exclude unless there (checked once per process). */
  #excludeOwnFiles(dir: string): void {
    if (this.#excluded.has(dir)) return;
    const file = path.join(dir, 'info', 'exclude');
    let text = '';
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch {
      makeDirs(path.dirname(file), 0o700);
    }
    if (!text.split('\n').includes(CACHE_EXCLUDE.trim())) {
      fs.appendFileSync(file, `${text === '' || text.endsWith('\n') ? '' : '\n'}${CACHE_EXCLUDE}`);
    }
    this.#excluded.add(dir);
  }

  /** Ends the long-lived git processes (they also end on their own when idle). */
  close(): void {
    for (const probe of this.#probes.values()) probe.close();
    this.#probes.clear();
  }

  /** Whether git has a committer identity in `dir` (asked once per worker process and cache). */
  async #hasIdentity(dir: string): Promise<boolean> {
    const known = this.#identity.get(this.#root);
    if (known !== undefined) return known;
    const has = (await gitProbe(dir, ['config', 'user.email'])) !== null;
    this.#identity.set(this.#root, has);
    return has;
  }
}
