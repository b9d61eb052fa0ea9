/**
 * A `tasks` step on BullMQ (a private redis-server) with two `phasebridge worker` processes of
 * concurrency 2: the 4 task jobs spread over both processes, run in parallel, and the run
 * completes with every task done once; the tasks of a `runsOn` step go only to a worker with the
 * label, in parallel lanes there. Skipped with a loud banner without Redis (fails in CI).
 */
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { taskLogPath } from '../../../src/jobs/orchestrator/task-jobs.ts';
import { createBullmqQueue } from '../../../src/jobs/queue/bullmq-driver.ts';
import {
  inCi,
  NO_REDIS_BANNER,
  type RedisHandle,
  redisAvailable,
  startRedis,
} from '../../support/redis.ts';
import {
  startWorkerProcess,
  type WorkerProcess,
  workerPidOfLog,
} from '../../support/worker-processes.ts';
import { ALICE, ledgerOf, makeEnv, repeatedKeys, type TestEnv } from './helpers.ts';

const availability = redisAvailable();

if (availability.ok || inCi()) {
  describe('tasks step on BullMQ with two worker processes', () => {
    let redis: RedisHandle;
    let env: TestEnv | undefined;
    const workers: WorkerProcess[] = [];
    beforeAll(async () => {
      redis = await startRedis();
    });
    afterAll(async () => {
      for (const w of workers) await w.stop();
      await env?.dispose();
      await redis?.stop();
    });

    it('spreads 4 tasks over both workers and completes the run', async () => {
      env = await makeEnv({}, () => createBullmqQueue({ url: redis.url }));
      env.workflow(
        'par',
        `id: par
steps:
  - { id: plan, agent: demo, prompt: "demo: sleep=10 tasks=4" }
  - id: work
    agent: demo
    prompt: "demo: sleep=200 together=4"
    tasks: { file: tasks.json, maxWorkers: 4 }
`,
      );
      // Started side by side: each start is a process boot, seconds on a loaded machine.
      const both = [0, 1].map(() =>
        startWorkerProcess({ home: env!.home, redisUrl: redis.url, concurrency: 2 }),
      );
      workers.push(...(await Promise.all(both)));
      const o = await env.open({ worker: false });
      const run = await o.startRun({
        workflow: 'par',
        workspace: env.workspace,
        // Its own spec, so its own run id: the file's tests share one Redis and its job ids.
        spec: 'parallel tasks',
        actor: ALICE,
      });
      const state = await o.waitUntilIdle(run.id);
      expect(state.status).toBe('completed');
      const tasks = state.steps[1]!.tasks!;
      expect(tasks.map((t) => [t.id, t.status, t.attempt])).toEqual([
        ['t1', 'completed', 1],
        ['t2', 'completed', 1],
        ['t3', 'completed', 1],
        ['t4', 'completed', 1],
      ]);
      const ranBy = tasks.map((t) =>
        workerPidOfLog(
          fs.readFileSync(taskLogPath(env!.workspace, run.id, 'work', t.id, 1), 'utf8'),
        ),
      );
      // Each worker process has 2 slots: the 4 tasks, which wait for each other to start
      // (together=4), need both to run at once.
      expect(new Set(ranBy)).toEqual(new Set(workers.map((w) => w.pid)));
      const events = ledgerOf(state).flatMap((e) => e.events);
      const started = events.filter((e) => e.type === 'taskStarted').length;
      expect(started).toBe(4);
      expect(repeatedKeys(ledgerOf(state))).toEqual([]);
    });

    it('tasks of a runsOn step run only on a worker with the label, side by side', async () => {
      for (const w of workers.splice(0)) await w.stop();
      await env?.dispose();
      env = await makeEnv({}, () => createBullmqQueue({ url: redis.url }));
      env.workflow(
        'gpu',
        `id: gpu
steps:
  - { id: plan, agent: demo, prompt: "demo: sleep=10 tasks=2" }
  - id: train
    agent: demo
    prompt: "demo: sleep=200 together=2"
    runsOn: [gpu]
    tasks: { file: tasks.json, maxWorkers: 2 }
`,
      );
      const [plain, gpu] = await Promise.all([
        startWorkerProcess({ home: env.home, redisUrl: redis.url, concurrency: 2 }),
        startWorkerProcess({
          home: env.home,
          redisUrl: redis.url,
          concurrency: 2,
          args: ['--label', 'gpu'],
        }),
      ]);
      workers.push(plain, gpu);
      const o = await env.open({ worker: false });
      const run = await o.startRun({
        workflow: 'gpu',
        workspace: env.workspace,
        spec: 'gpu tasks',
        actor: ALICE,
      });
      const state = await o.waitUntilIdle(run.id);
      expect(state.status).toBe('completed');
      const tasks = state.steps[1]!.tasks!;
      expect(tasks.map((t) => [t.id, t.status, t.attempt])).toEqual([
        ['t1', 'completed', 1],
        ['t2', 'completed', 1],
      ]);
      const ranBy = tasks.map((t) =>
        workerPidOfLog(
          fs.readFileSync(taskLogPath(env!.workspace, run.id, 'train', t.id, 1), 'utf8'),
        ),
      );
      // The unlabelled worker put both back; the gpu worker ran them in its two slots at once.
      expect(ranBy).toEqual([gpu.pid, gpu.pid]);
      const events = ledgerOf(state).flatMap((e) => e.events);
      const firstDone = events.findIndex((e) => e.type === 'taskCompleted');
      const startedBefore = events
        .slice(0, firstDone)
        .filter((e) => e.type === 'taskStarted').length;
      expect(startedBefore).toBe(2);
      expect(repeatedKeys(ledgerOf(state))).toEqual([]);
    });
  });
} else {
  describe('tasks step on BullMQ with two worker processes', () => {
    it.skip('needs redis-server (apt-get install -y redis-server, or set REDIS_URL)', () => {});
  });
  process.stderr.write(NO_REDIS_BANNER);
}
