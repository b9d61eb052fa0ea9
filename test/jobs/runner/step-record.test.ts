/**
 * A step's diff and changed-files list in a git workspace, with real git, as the user sees them:
 * the checkpoint message's text and the console's diff file. Whatever .gitignore says about the
 * run folders, the step's changes show and the run folders never do; when git cannot make the
 * diff, the checkpoint, the diff file and the step's log (once) say why.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { plainTextOf } from '../../../src/bridges/render-text.ts';
import { readChangedFiles } from '../../../src/chatops/changed-files.ts';
import { renderOpenCheckpoint } from '../../../src/chatops/checkpoint-message.ts';
import { diffFileOf } from '../../../src/jobs/runner/git-diff.ts';
import { RUN_FOLDERS } from '../../../src/jobs/runner/run-folders.ts';
import { finishStepRecord, startStepRecord } from '../../../src/jobs/runner/step-record.ts';

const HAS_GIT = spawnSync('git', ['--version']).status === 0;

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], {
    cwd,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  });

/** What the user sees of one step: checkpoint text, diff file, log. */
interface Seen {
  checkpoint: string;
  diff: string;
  log: string;
}

describe.skipIf(!HAS_GIT)('step diffs and changed files (needs git on PATH)', () => {
  let ws: string;
  let logFile: string;
  beforeEach(() => {
    ws = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-steprec-'));
    logFile = path.join(ws, '.phasebridge', 'runs', 'r1', 'logs', 'build-1.log');
  });
  afterEach(() => fs.rmSync(ws, { recursive: true, force: true }));

  /** A repository with README.md committed and `ignore` as its .gitignore. */
  function repo(ignore: string): void {
    git(ws, 'init', '-q');
    fs.writeFileSync(path.join(ws, 'README.md'), 'first line\nsecond line\n');
    fs.writeFileSync(path.join(ws, '.gitignore'), ignore);
    git(ws, 'add', '.');
    git(ws, 'commit', '-q', '-m', 'start');
  }

  /** The step's agent: edits README.md, adds src/new.ts, writes into every run folder. */
  function agentWrites(): void {
    fs.writeFileSync(path.join(ws, 'README.md'), 'first line\nchanged line\n');
    fs.mkdirSync(path.join(ws, 'src'), { recursive: true });
    fs.writeFileSync(path.join(ws, 'src', 'new.ts'), 'export const n = 1;\n');
    for (const d of RUN_FOLDERS) {
      fs.mkdirSync(path.join(ws, d, 'state'), { recursive: true });
      fs.writeFileSync(path.join(ws, d, 'state', 'bookkeeping.json'), '{"step":"build"}\n');
    }
    fs.mkdirSync(path.dirname(logFile), { recursive: true });
    fs.appendFileSync(logFile, 'agent: done\n');
  }

  /** Runs the step's records around `agent` and returns what the user sees. */
  async function step(agent: () => void): Promise<Seen> {
    const start = await startStepRecord(ws);
    expect(start).not.toBeNull();
    agent();
    await finishStepRecord(start!, { workspace: ws, logFile, stepId: 'build', attempt: 1 });
    const changed = readChangedFiles(ws, logFile, 'build', 1);
    const view = {
      runId: 'r1',
      checkpoint: {
        id: 'build:1',
        stepId: 'build',
        when: 'after' as const,
        reason: 'after step build',
        answers: ['approve' as const, 'reject' as const],
        policy: { approvals: 1, fourEyes: false, onExpiry: 'keep' as const },
        openedAt: new Date().toISOString(),
        votes: [],
      },
      ...(changed !== undefined && { changedFiles: changed }),
    };
    const file = diffFileOf(logFile);
    return {
      checkpoint: plainTextOf(renderOpenCheckpoint(view, 'x'.repeat(22)).text),
      diff: fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '',
      log: fs.readFileSync(logFile, 'utf8'),
    };
  }

  /** The step's changes are listed and diffed, and nothing of the run folders. */
  function expectTheStepsChanges(seen: Seen): void {
    expect(seen.checkpoint).toMatch(/Changed by build \(vs [0-9a-f]{7}\):\n/);
    expect(seen.checkpoint).toContain('README.md +1 −1');
    expect(seen.checkpoint).toContain('src/new.ts (new or binary)');
    expect(seen.diff).toContain('+changed line');
    expect(seen.diff).toContain('+++ b/src/new.ts');
    for (const d of RUN_FOLDERS) {
      expect(seen.checkpoint).not.toContain(d);
      expect(seen.diff).not.toContain(d);
    }
    expect(seen.checkpoint).not.toContain('no diff');
    expect(seen.log).not.toContain('[phasebridge]');
  }

  for (const folder of RUN_FOLDERS) {
    it(`shows the step's changes when .gitignore ignores ${folder}/`, async () => {
      repo(`${folder}/\n`);
      expectTheStepsChanges(await step(agentWrites));
    });
  }

  it("shows the step's changes when .gitignore ignores every run folder", async () => {
    repo(RUN_FOLDERS.map((d) => `${d}/\n`).join(''));
    expectTheStepsChanges(await step(agentWrites));
  });

  it("shows the step's changes when .gitignore ignores nothing of them", async () => {
    repo('node_modules/\n');
    expectTheStepsChanges(await step(agentWrites));
  });

  it('a nested repository does not hide the outer diff (and is not diffed into)', async () => {
    repo('.phasebridge/\n');
    const nested = path.join(ws, 'vendor', 'lib');
    fs.mkdirSync(nested, { recursive: true });
    git(nested, 'init', '-q');
    fs.writeFileSync(path.join(nested, 'lib.txt'), 'v1\n');
    git(nested, 'add', '.');
    git(nested, 'commit', '-q', '-m', 'lib');
    const seen = await step(agentWrites);
    expect(seen.checkpoint).toContain('README.md +1 −1');
    expect(seen.diff).toContain('+changed line');
    expect(seen.diff).not.toContain('lib.txt');
    expect(seen.checkpoint).not.toContain('no diff');
    expect(seen.log).not.toContain('[phasebridge]');
  });

  it('a path git refuses is left out, and the checkpoint, diff and log say which and why', async () => {
    repo('.phasebridge/\n');
    const seen = await step(() => {
      agentWrites();
      // A nested repository with no commit: git refuses to add it.
      fs.mkdirSync(path.join(ws, 'scratch'));
      git(path.join(ws, 'scratch'), 'init', '-q');
      fs.writeFileSync(path.join(ws, 'scratch', 'notes.txt'), 'draft\n');
    });
    expect(seen.checkpoint).toContain('README.md +1 −1');
    const why =
      "the diff leaves out what git refused: 'scratch/' does not have a commit checked out";
    expect(seen.checkpoint).toContain(why);
    expect(seen.diff).toContain('+changed line');
    expect(seen.diff).toContain(why);
    expect(seen.log.split('\n').filter((l) => l.startsWith('[phasebridge]'))).toHaveLength(1);
    expect(seen.log).toContain(why);
  });

  it('a snapshot git cannot make says "no diff: <reason>" in the checkpoint, diff page and log, once', async () => {
    repo('.phasebridge/\n');
    // A damaged index: git stops on it.
    fs.writeFileSync(path.join(ws, '.git', 'index'), 'not an index');
    const seen = await step(agentWrites);
    expect(seen.checkpoint).toMatch(/no diff: git add: .*index/);
    expect(seen.diff).toMatch(/^\[phasebridge\] no diff: git add: .*index/);
    const notes = seen.log.split('\n').filter((l) => l.startsWith('[phasebridge]'));
    expect(notes).toHaveLength(1);
    expect(notes[0]).toMatch(/no diff: git add: .*index/);
  });
});
