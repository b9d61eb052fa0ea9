import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { gitWorkspaceRef, landCommit, originOf } from '../../../src/jobs/git/bridge-git.ts';
import { GitBatchCheck } from '../../../src/jobs/git/git-batch.ts';
import { commitsOf } from '../../../src/jobs/git/run-git.ts';
import { GitWorkFolders, stagedAnyOf } from '../../../src/jobs/git/worker-git.ts';
import { prepareWorkspace } from '../../../src/jobs/orchestrator/job-workspace.ts';
import { gitFixture } from '../workers/support.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});
function tmp(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-wgit-'));
  dirs.push(d);
  return d;
}
const rev = (cwd: string, ref: string) =>
  execFileSync('git', ['rev-parse', ref], { cwd, encoding: 'utf8' }).trim();

describe('git work folders of a worker', () => {
  it('a re-take starts clean at the base: what a killed attempt left is gone, its logs stay', async () => {
    const dir = tmp();
    const ws = path.join(dir, 'ws');
    const { origin } = gitFixture(dir, ws);
    const base = rev(ws, 'HEAD');
    const folders = new GitWorkFolders(path.join(dir, 'work'));
    const ref = { repo: origin, baseCommit: base, branch: 'phasebridge/r1' };
    const wd = await folders.checkout('r1', ref);
    fs.writeFileSync(path.join(wd, 'half.txt'), 'half');
    fs.writeFileSync(path.join(wd, 'README.md'), 'changed by a dead attempt');
    fs.mkdirSync(path.join(wd, '.phasebridge'));
    fs.writeFileSync(path.join(wd, '.phasebridge', 'attempt.log'), 'log');
    const again = await folders.checkout('r1', ref);
    expect(again).toBe(wd);
    expect(fs.existsSync(path.join(wd, 'half.txt'))).toBe(false);
    expect(fs.readFileSync(path.join(wd, 'README.md'), 'utf8')).toBe('hello\n');
    expect(fs.existsSync(path.join(wd, '.phasebridge', 'attempt.log'))).toBe(true);

    fs.writeFileSync(path.join(wd, 'done.txt'), 'done');
    const pushed = await folders.commitAndPush(wd, ref, 'step', []);
    expect(pushed.changedFiles).toEqual(['done.txt']); // never phasebridge's own files
    // With line counts, for the checkpoint message (the bridge writes them beside the step's log).
    expect(pushed.fileChanges).toEqual([{ path: 'done.txt', added: 1, removed: 0 }]);
    expect(rev(origin, ref.branch)).toBe(pushed.commit);
    await landCommit(ws, origin, ref.branch, pushed.commit);
    expect(rev(ws, ref.branch)).toBe(pushed.commit);
  });

  it('a base commit the remote does not have fails clearly', async () => {
    const dir = tmp();
    const ws = path.join(dir, 'ws');
    const { origin } = gitFixture(dir, ws);
    const folders = new GitWorkFolders(path.join(dir, 'work'));
    const ref = { repo: origin, baseCommit: 'b'.repeat(40), branch: 'phasebridge/r2' };
    await expect(folders.checkout('r2', ref)).rejects.toThrow(
      /base commit bbbbbbbbbbbb is not on any branch/,
    );
  });

  it('a shared workspace missing on this machine is named, with the fix', async () => {
    const job = { id: 'r:s:1', runId: 'r', stepId: 's', attempt: 1, payload: {} };
    const p = {
      v: 2 as const,
      kind: 'step' as const,
      stepId: 's',
      workspace: { mode: 'shared' as const, path: '/nowhere/at/all' },
      layout: 'native' as const,
      agent: { name: 'a', engine: 'command' as const, argv: [], env: [] },
      prompt: 'x',
    };
    await expect(prepareWorkspace(job, p, undefined)).rejects.toThrow(
      /workspace \/nowhere\/at\/all does not exist on worker host .*mounted at the same path/,
    );
  });

  it('the bridge says what a git-mode workspace lacks: a repository, an origin', async () => {
    const plain = tmp();
    await expect(gitWorkspaceRef(plain, 'r3')).rejects.toThrow(/is not a git repository/);
    execFileSync('git', ['init', '--quiet'], { cwd: plain });
    await expect(gitWorkspaceRef(plain, 'r3')).rejects.toThrow(/has no 'origin' remote/);
  });

  it('the first job of a run pushes the base to the run branch; later ones start from the bridge branch', async () => {
    const dir = tmp();
    const ws = path.join(dir, 'ws');
    const { origin } = gitFixture(dir, ws);
    const ref = await gitWorkspaceRef(ws, 'r4');
    expect(ref).toMatchObject({
      mode: 'git',
      repo: origin,
      branch: 'phasebridge/r4',
      baseCommit: rev(ws, 'HEAD'),
    });
    expect(rev(origin, 'phasebridge/r4')).toBe(rev(ws, 'HEAD'));
    execFileSync(
      'git',
      [
        '-c',
        'user.name=t',
        '-c',
        'user.email=t@e',
        'commit',
        '--quiet',
        '--allow-empty',
        '-m',
        'later',
      ],
      { cwd: ws },
    );
    const later = (await gitWorkspaceRef(ws, 'r4')) as { baseCommit: string };
    expect(later.baseCommit).toBe(rev(ws, 'phasebridge/r4'));
  });

  it('a step that changed nothing pushes its base: no empty commit, no changed files', async () => {
    const dir = tmp();
    const ws = path.join(dir, 'ws');
    const { origin } = gitFixture(dir, ws);
    const base = rev(ws, 'HEAD');
    const folders = new GitWorkFolders(path.join(dir, 'work'));
    const ref = { repo: origin, baseCommit: base, branch: 'phasebridge/r5' };
    const wd = await folders.checkout('r5', ref);
    // Only phasebridge's own files and an excluded layout file: nothing to commit.
    fs.mkdirSync(path.join(wd, '.phasebridge'));
    fs.writeFileSync(path.join(wd, '.phasebridge', 'step.log'), 'log');
    fs.writeFileSync(path.join(wd, 'spec.md'), 'the spec');
    const pushed = await folders.commitAndPush(wd, ref, 'step', ['spec.md']);
    expect(pushed).toEqual({ commit: base, changedFiles: [], fileChanges: [] });
    expect(rev(origin, ref.branch)).toBe(base);
  });

  it('an excluded layout file the base tracks keeps its base content in the commit', async () => {
    const dir = tmp();
    const ws = path.join(dir, 'ws');
    const { origin } = gitFixture(dir, ws);
    const base = rev(ws, 'HEAD');
    const folders = new GitWorkFolders(path.join(dir, 'work'));
    const ref = { repo: origin, baseCommit: base, branch: 'phasebridge/r6' };
    const wd = await folders.checkout('r6', ref);
    fs.writeFileSync(path.join(wd, 'README.md'), 'the worker wrote the spec here\n');
    fs.writeFileSync(path.join(wd, 'work.txt'), 'a\nb\n');
    const pushed = await folders.commitAndPush(wd, ref, 'step', ['README.md']);
    expect(pushed.fileChanges).toEqual([{ path: 'work.txt', added: 2, removed: 0 }]);
    const show = (spec: string) =>
      execFileSync('git', ['show', spec], { cwd: ws, encoding: 'utf8' });
    await landCommit(ws, origin, ref.branch, pushed.commit);
    expect(show(`${pushed.commit}:README.md`)).toBe('hello\n');
    expect(rev(ws, `${pushed.commit}~1`)).toBe(base);
  });

  it("phasebridge's own files stay out of the commit where the workspace does not ignore them", async () => {
    const dir = tmp();
    const ws = path.join(dir, 'ws');
    const { origin } = gitFixture(dir, ws);
    // A workspace that tracks a file of ours and ignores nothing of ours.
    fs.writeFileSync(path.join(ws, '.gitignore'), 'workflows/\n');
    fs.mkdirSync(path.join(ws, '.phasebridge'));
    fs.writeFileSync(path.join(ws, '.phasebridge', 'tracked.txt'), 'base\n');
    execFileSync('git', ['add', '.'], { cwd: ws });
    execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'ours'], {
      cwd: ws,
    });
    execFileSync('git', ['push', '-q', 'origin', 'main'], { cwd: ws });
    const base = rev(ws, 'HEAD');
    const folders = new GitWorkFolders(path.join(dir, 'work'));
    const ref = { repo: origin, baseCommit: base, branch: 'phasebridge/r6b' };
    const wd = await folders.checkout('r6b', ref);
    fs.writeFileSync(path.join(wd, '.phasebridge', 'tracked.txt'), 'changed by the step\n');
    fs.writeFileSync(path.join(wd, '.phasebridge', 'step.log'), 'log');
    fs.writeFileSync(path.join(wd, 'work.txt'), 'w\n');
    const pushed = await folders.commitAndPush(wd, ref, 'step', []);
    folders.close();
    expect(pushed.changedFiles).toEqual(['work.txt']);
    const files = execFileSync('git', ['ls-tree', '-r', '--name-only', pushed.commit], {
      cwd: origin,
      encoding: 'utf8',
    });
    expect(files.split('\n')).not.toContain('.phasebridge/step.log');
    expect(
      execFileSync('git', ['show', `${pushed.commit}:.phasebridge/tracked.txt`], {
        cwd: origin,
        encoding: 'utf8',
      }),
    ).toBe('base\n');
  });

  it("a base commit on another branch than the job's is still found (every branch is fetched then)", async () => {
    const dir = tmp();
    const ws = path.join(dir, 'ws');
    const { origin } = gitFixture(dir, ws);
    const folders = new GitWorkFolders(path.join(dir, 'work'));
    // A task's branch does not exist on the remote yet; its base is on main.
    const ref = { repo: origin, baseCommit: rev(ws, 'HEAD'), branch: 'phasebridge/r7-tasks/t1' };
    const wd = await folders.checkout('r7+task+t1', ref);
    expect(rev(wd, 'HEAD')).toBe(rev(ws, 'HEAD'));
  });

  it('landing a commit the remote does not hold fails as overwritten and leaves the branch', async () => {
    const dir = tmp();
    const ws = path.join(dir, 'ws');
    const { origin } = gitFixture(dir, ws);
    const ref = (await gitWorkspaceRef(ws, 'r8')) as { branch: string; baseCommit: string };
    await expect(landCommit(ws, origin, ref.branch, 'c'.repeat(40))).rejects.toThrow(
      /is not on phasebridge\/r8 of .* any more/,
    );
    expect(rev(ws, ref.branch)).toBe(ref.baseCommit);
    // A tree id is not a commit: refused too, branch unchanged.
    const tree = rev(ws, 'HEAD^{tree}');
    await expect(landCommit(ws, origin, ref.branch, tree)).rejects.toThrow();
    expect(rev(ws, ref.branch)).toBe(ref.baseCommit);
  });

  it('an agent that commits by itself (a merge step): its commit is pushed, changes from the base', async () => {
    const dir = tmp();
    const ws = path.join(dir, 'ws');
    const { origin } = gitFixture(dir, ws);
    const base = rev(ws, 'HEAD');
    const folders = new GitWorkFolders(path.join(dir, 'work'));
    for (const leftover of [false, true]) {
      const branch = `phasebridge/r9${leftover ? 'b' : 'a'}`;
      const ref = { repo: origin, baseCommit: base, branch };
      const wd = await folders.checkout(leftover ? 'r9b' : 'r9a', ref);
      fs.writeFileSync(path.join(wd, 'merged.txt'), 'm\n');
      execFileSync('git', ['add', 'merged.txt'], { cwd: wd });
      execFileSync('git', ['-c', 'user.name=a', '-c', 'user.email=a@b', 'commit', '-qm', 'merge'], {
        cwd: wd,
      });
      const own = rev(wd, 'HEAD');
      // With something left uncommitted, phasebridge commits it on top of the agent's commit.
      if (leftover) fs.writeFileSync(path.join(wd, 'left.txt'), 'l\n');
      const pushed = await folders.commitAndPush(wd, ref, 'step', []);
      expect(pushed.commit).toBe(rev(wd, 'HEAD'));
      expect(rev(origin, branch)).toBe(pushed.commit);
      if (!leftover) expect(pushed.commit).toBe(own);
      expect(pushed.changedFiles.sort()).toEqual(
        leftover ? ['left.txt', 'merged.txt'] : ['merged.txt'],
      );
    }
  });
});

describe('commitsOf', () => {
  it('names the commit of each rev in one call; null for missing, non-commit and odd names', async () => {
    const dir = tmp();
    const ws = path.join(dir, 'ws');
    gitFixture(dir, ws);
    const head = rev(ws, 'HEAD');
    expect(
      await commitsOf(ws, ['HEAD', 'refs/heads/nope', 'HEAD^{tree}', 'main\nHEAD', 'main']),
    ).toEqual([head, null, null, null, head]);
  });
});

describe("the bridge's origin lookup", () => {
  it('is asked again once the origin remote changes or goes', async () => {
    const dir = tmp();
    const ws = path.join(dir, 'ws');
    const { origin } = gitFixture(dir, ws);
    expect(await originOf(ws)).toBe(origin);
    expect(await originOf(ws)).toBe(origin);
    const moved = path.join(dir, 'moved.git');
    execFileSync('git', ['remote', 'set-url', 'origin', moved], { cwd: ws });
    expect(await originOf(ws)).toBe(moved);
    execFileSync('git', ['remote', 'remove', 'origin'], { cwd: ws });
    expect(await originOf(ws)).toBeNull();
  });
});

describe('one long-lived commit probe', () => {
  it('answers probe after probe, and finds commits made after it started', async () => {
    const dir = tmp();
    const ws = path.join(dir, 'ws');
    gitFixture(dir, ws);
    const probe = new GitBatchCheck(ws);
    const head = rev(ws, 'HEAD');
    expect(await probe.commitsOf(['HEAD', 'refs/heads/nope', 'main\nHEAD', 'HEAD^{tree}'])).toEqual(
      [head, null, null, null],
    );
    execFileSync(
      'git',
      ['-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '--allow-empty', '-m', 'next'],
      {
        cwd: ws,
      },
    );
    const next = rev(ws, 'HEAD');
    expect(await probe.commitsOf([next, head])).toEqual([next, head]);
    probe.close();
    // Closed, it starts again on the next probe.
    expect(await probe.commitsOf([next])).toEqual([next]);
    probe.close();
  });

  it('a folder that is no repository fails the probe instead of hanging', async () => {
    const probe = new GitBatchCheck(tmp());
    await expect(probe.commitsOf(['HEAD'])).rejects.toThrow(/git cat-file failed/);
  });

  it('runs the reset only when `git add` staged something left out', () => {
    const left = ['.phasebridge', '.codemachine/inputs/specifications.md'];
    expect(stagedAnyOf("add 'src/a.ts'\nremove 'old.txt'\n", left)).toBe(false);
    expect(stagedAnyOf("add '.phasebridge/runs/r/x.log'\n", left)).toBe(true);
    expect(stagedAnyOf("remove '.codemachine/inputs/specifications.md'\n", left)).toBe(true);
    expect(stagedAnyOf("add '.phasebridgeish'\n", left)).toBe(false);
    // A name git quotes cannot be read: reset, to be safe.
    expect(stagedAnyOf('add \'"we\\ird"\'\n', left)).toBe(true);
  });
});
