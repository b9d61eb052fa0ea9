/** A step's diff in a git workspace, with real git: what changed, and nothing of the user's touched. */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { diffFileOf, snapshotTree, writeStepDiff } from '../../../src/jobs/runner/git-diff.ts';

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], {
    cwd,
    encoding: 'utf8',
  });

describe('step diffs', () => {
  let ws: string;
  beforeEach(() => {
    ws = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-gitdiff-'));
  });
  afterEach(() => fs.rmSync(ws, { recursive: true, force: true }));

  it('saves what the step changed, excluding run folders, leaving index and HEAD alone', async () => {
    git(ws, 'init', '-q');
    fs.writeFileSync(path.join(ws, 'app.txt'), 'one\n');
    fs.writeFileSync(path.join(ws, 'staged.txt'), 'before\n');
    git(ws, 'add', '.');
    git(ws, 'commit', '-q', '-m', 'start');
    // The user has a staged change of their own before the step starts.
    fs.writeFileSync(path.join(ws, 'staged.txt'), 'user edit\n');
    git(ws, 'add', 'staged.txt');
    const head = git(ws, 'rev-parse', 'HEAD');
    const indexBefore = git(ws, 'diff', '--cached', '--name-status');

    const before = (await snapshotTree(ws)).tree;
    expect(before).toMatch(/^[0-9a-f]{40}$/);
    // The step: edits a file, adds one, and writes its run bookkeeping.
    fs.writeFileSync(path.join(ws, 'app.txt'), 'one\ntwo\n');
    fs.writeFileSync(path.join(ws, 'new.txt'), 'fresh\n');
    fs.mkdirSync(path.join(ws, '.phasebridge', 'runs'), { recursive: true });
    fs.writeFileSync(path.join(ws, '.phasebridge', 'runs', 'x.json'), '{}');
    const file = diffFileOf(path.join(ws, '.phasebridge', 'runs', 'r', 'logs', 'build-1.log'));
    expect(file).toMatch(/build-1\.diff$/);
    const after = (await snapshotTree(ws)).tree;
    expect(await writeStepDiff(ws, before!, after!, file)).toBeUndefined();

    const diff = fs.readFileSync(file, 'utf8');
    expect(diff).toContain('+two');
    expect(diff).toContain('+++ b/new.txt');
    expect(diff).not.toContain('.phasebridge');
    // The user's staged edit predates the step: not part of its diff.
    expect(diff).not.toContain('user edit');
    expect(git(ws, 'rev-parse', 'HEAD')).toBe(head);
    expect(git(ws, 'diff', '--cached', '--name-status')).toBe(indexBefore);
    expect(git(ws, 'status', '--porcelain')).toContain('?? new.txt');
  });

  it('a step that changed nothing has an empty diff', async () => {
    git(ws, 'init', '-q');
    const before = (await snapshotTree(ws)).tree;
    const file = path.join(ws, 'out.diff');
    const after = (await snapshotTree(ws)).tree;
    expect(await writeStepDiff(ws, before!, after!, file)).toBeUndefined();
    expect(fs.readFileSync(file, 'utf8')).toBe('');
  });

  it('a folder that is not a git work tree has no snapshot (and no error)', async () => {
    expect(await snapshotTree(ws)).toEqual({ tree: null });
    expect(await snapshotTree(path.join(ws, 'missing'))).toEqual({ tree: null });
  });
});
