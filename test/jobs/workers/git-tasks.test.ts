/**
 * A `tasks` step in git workspace mode with two `phasebridge worker` processes (empty homes,
 * BullMQ on a private redis-server, a local bare repository as origin): the task list comes from
 * the run branch the plan step's worker pushed; each task checks out its own task branch
 * `phasebridge/<run>-tasks/<task>` at the run branch's commit in its own work folder, commits
 * and pushes it; the task's result carries branch and commit, the bridge fetches each; the merge
 * step that follows (on any worker) sees the task branches and merges them onto the run branch.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { taskLogPath } from '../../../src/jobs/orchestrator/task-jobs.ts';
import {
  inCi,
  NO_REDIS_BANNER,
  type RedisHandle,
  redisAvailable,
  startRedis,
} from '../../support/redis.ts';
import { slow } from '../../support/slowdown.ts';
import { ALICE, makeEnv, type TestEnv } from '../orchestrator/helpers.ts';
import {
  bridgeQueue,
  ensureBuilt,
  GIT_AGENT,
  git,
  gitFixture,
  startWorker,
  type WorkerProcess,
} from './support.ts';

const TIMEOUT = slow(90_000);
const TASKS = JSON.stringify({
  tasks: [
    { id: 't1', title: 'first part' },
    { id: 't2', title: 'second part' },
  ],
});
const WORKFLOW = `id: gittasks
steps:
  - id: plan
    agent: gitagent
    prompt: ${JSON.stringify(`write tasks.json ${TASKS}`)}
  - id: work
    agent: gitagent
    prompt: "sleep 600\\ntask-write done by a task"
    tasks: { file: tasks.json, maxWorkers: 2 }
  - id: merge
    agent: gitagent
    prompt: "merge-tasks\\nneed t1.txt\\nneed t2.txt"
`;

const redisOk = redisAvailable().ok || inCi();
if (!redisOk) process.stderr.write(NO_REDIS_BANNER);
describe.runIf(redisOk)('tasks step in git workspace mode', () => {
  let redis: RedisHandle;
  let env: TestEnv | undefined;
  const workers: WorkerProcess[] = [];
  beforeAll(async () => {
    ensureBuilt();
    redis = await startRedis();
  });
  afterAll(async () => {
    await redis?.stop();
  });
  afterEach(async () => {
    for (const w of workers.splice(0)) {
      if (w.child.exitCode === null && w.child.signalCode === null) await w.stop();
    }
    await env?.dispose();
    env = undefined;
  });

  it('each task pushes its own branch from two workers; the merge step merges them', {
    timeout: TIMEOUT,
  }, async () => {
    env = await makeEnv({}, () => bridgeQueue(redis.url));
    const e = env;
    const { origin } = gitFixture(e.dir, e.workspace);
    await e.repos.agents.add({
      name: 'gitagent',
      engine: 'command',
      argv: [process.execPath, GIT_AGENT],
    });
    e.workflow('gittasks', WORKFLOW);
    for (const name of ['w1', 'w2']) {
      workers.push(await startWorker(redis.url, path.join(e.dir, name)));
    }
    const o = await e.open({ worker: false, workspaceMode: 'git' });
    const run = await o.startRun({
      workflow: 'gittasks',
      workspace: e.workspace,
      spec: 's',
      actor: ALICE,
    });
    const state = await o.waitUntilIdle(run.id);
    expect(state.blocked?.reason).toBeUndefined();
    expect(state.status).toBe('completed');
    // The list was read from the run branch (the bridge's working tree never had it).
    expect(fs.existsSync(path.join(e.workspace, 'tasks.json'))).toBe(false);
    const runBranch = `phasebridge/${run.id}`;
    // The plan step's commit: one on top of main, adding the task list.
    const main = git(e.workspace, 'rev-parse', 'main');
    const planCommit = git(
      e.workspace,
      'rev-list',
      '--reverse',
      '--ancestry-path',
      `${main}..${runBranch}`,
    ).split('\n')[0]!;
    expect(git(e.workspace, 'diff', '--name-only', main, planCommit)).toBe('tasks.json');
    const tasks = state.steps[1]!.tasks!;
    for (const t of tasks) {
      const branch = `phasebridge/${run.id}-tasks/${t.id}`;
      expect(t).toMatchObject({ status: 'completed', result: { branch } });
      const commit = t.result!.commit!;
      expect(commit).toMatch(/^[0-9a-f]{40}$/);
      // Pushed to origin, fetched by the bridge onto a local branch of the same name.
      expect(git(e.workspace, 'rev-parse', `refs/heads/${branch}`)).toBe(commit);
      expect(git(e.dir, '--git-dir', origin, 'rev-parse', `refs/heads/${branch}`)).toBe(commit);
      // One commit on top of the plan step's commit, holding only the task's file.
      expect(git(e.workspace, 'rev-parse', `${commit}~1`)).toBe(planCommit);
      expect(git(e.workspace, 'show', `${commit}:${t.id}.txt`)).toBe('done by a task');
      expect(git(e.workspace, 'diff', '--name-only', `${commit}~1`, commit)).toBe(`${t.id}.txt`);
    }
    // The two tasks ran at once on the two workers, each in its own work folder.
    const cwds = tasks.map((t) => {
      const log = fs.readFileSync(taskLogPath(e.workspace, run.id, 'work', t.id, 1), 'utf8');
      return /cwd=(\S+)/.exec(log)?.[1];
    });
    expect(new Set(cwds.map((c) => path.relative(e.dir, c!).split(path.sep)[0]))).toEqual(
      new Set(['w1', 'w2']),
    );
    expect(cwds.map((c) => path.basename(c!)).sort()).toEqual([
      `${run.id}+task+t1`,
      `${run.id}+task+t2`,
    ]);
    expect(new Set(tasks.map((t) => t.worker)).size).toBe(2);
    // The merge step saw both task branches and its commit (the run branch) holds both files.
    const mergeLog = fs.readFileSync(await o.logPath(run.id, 'merge'), 'utf8');
    expect(mergeLog).toContain(`merged phasebridge/${run.id}-tasks/t1`);
    expect(mergeLog).toContain(`merged phasebridge/${run.id}-tasks/t2`);
    expect(git(e.workspace, 'show', `${runBranch}:t1.txt`)).toBe('done by a task');
    expect(git(e.workspace, 'show', `${runBranch}:t2.txt`)).toBe('done by a task');
    for (const t of tasks) {
      expect(git(e.workspace, 'merge-base', '--is-ancestor', t.result!.commit!, runBranch)).toBe(
        '',
      );
    }
  });
});
