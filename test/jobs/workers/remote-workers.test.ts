/**
 * Workers anywhere: real `phasebridge worker` processes with empty homes (no bridge.db) run
 * steps queued by a bridge on BullMQ (a private redis-server), in git workspace mode against a
 * local bare repository: the worker clones, works on the run branch, pushes; the bridge fetches.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { describeWorker, WorkerWatch } from '../../../src/app/worker-watch.ts';
import { readChangedFiles } from '../../../src/chatops/changed-files.ts';
import { BridgeMetrics } from '../../../src/http/metrics.ts';
import { JOB_PHASES, parseStepJobResult } from '../../../src/jobs/orchestrator/job-payload.ts';
import { createLogger } from '../../../src/log.ts';
import { login, memoryLog, startConsole } from '../../bridges/web/support.ts';
import { runCliAsync } from '../../cli/support.ts';
import {
  inCi,
  NO_REDIS_BANNER,
  type RedisHandle,
  redisAvailable,
  startRedis,
} from '../../support/redis.ts';
import { holdsFor, slow } from '../../support/slowdown.ts';
import { ALICE, makeEnv, type TestEnv, waitFor } from '../orchestrator/helpers.ts';
import {
  bridgeQueue,
  ensureBuilt,
  GIT_AGENT,
  git,
  gitFixture,
  startWorker,
  type WorkerProcess,
} from './support.ts';

const availability = redisAvailable();
// Each test's run has its own spec, hence its own run id slug: the tests share one Redis, and two
// bridges starting `<second>-s` in the same second made the same job id, so the second run's job
// was taken for the first's (BullMQ keeps finished jobs) and its run waited forever.
const TIMEOUT = slow(90_000);

/** A workflow of `steps` ([id, prompt, runsOn?]) all run by the scripted git agent. */
function workflowYaml(id: string, steps: [string, string, string?][]): string {
  const lines = [`id: ${id}`, 'steps:'];
  for (const [step, prompt, runsOn] of steps) {
    lines.push(`  - id: ${step}`, '    agent: gitagent', `    prompt: ${JSON.stringify(prompt)}`);
    if (runsOn !== undefined) lines.push(`    runsOn: [${runsOn}]`);
  }
  return `${lines.join('\n')}\n`;
}

if (availability.ok || inCi()) {
  describe('remote workers', () => {
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

    /** A bridge (no in-process worker) on a git workspace with the scripted agent registered. */
    async function bridge() {
      env = await makeEnv({}, () => bridgeQueue(redis.url));
      gitFixture(env.dir, env.workspace);
      await env.repos.agents.add({
        name: 'gitagent',
        engine: 'command',
        argv: [process.execPath, GIT_AGENT],
      });
      const o = await env.open({ worker: false, workspaceMode: 'git' });
      return { env, o };
    }

    async function worker(name: string, args: string[] = [], extra: Record<string, string> = {}) {
      const w = await startWorker(redis.url, path.join(env!.dir, name), args, extra);
      workers.push(w);
      return w;
    }

    it('a worker with an empty home runs a step end to end; its commit lands on the bridge', {
      timeout: TIMEOUT,
    }, async () => {
      const { env, o } = await bridge();
      env.workflow('one', workflowYaml('one', [['make', 'write made.txt by a remote worker']]));
      const w = await worker('w1');
      const results: Record<string, unknown>[] = [];
      env.queue.onOutcome((_id, _job, outcome) => {
        if (outcome.ok) results.push(outcome.result);
      });
      const run = await o.startRun({
        workflow: 'one',
        workspace: env.workspace,
        spec: 'end to end',
        actor: ALICE,
      });
      const state = await o.waitUntilIdle(run.id);
      expect(state.status).toBe('completed');
      // The bridge fetched the worker's commit onto its run branch.
      const branch = `phasebridge/${run.id}`;
      expect(git(env.workspace, 'show', `${branch}:made.txt`)).toBe('by a remote worker');
      expect(git(env.workspace, 'log', '--format=%s', '-1', branch)).toContain(`run ${run.id}`);
      // The worker needed no bridge.db; its work happened in its own folder, not the bridge's.
      expect(fs.existsSync(path.join(w.home, 'bridge.db'))).toBe(false);
      expect(fs.existsSync(path.join(env.workspace, 'made.txt'))).toBe(false);
      // The bridge wrote the step's log from what the worker shipped.
      const log = fs.readFileSync(await o.logPath(run.id, 'make'), 'utf8');
      expect(log).toContain(`cwd=${path.join(w.home, 'work', 'runs', run.id)}`);
      expect(log).toContain('agent done');
      // What the worker's push reported is listed beside the bridge's log for the checkpoint message.
      const changes = readChangedFiles(env.workspace, await o.logPath(run.id, 'make'), 'make', 1);
      expect(changes?.files).toEqual([{ path: 'made.txt', added: 1, removed: 0 }]);
      // The result says when the worker reached each phase, in order (bench/workers.ts --timeline).
      const t = parseStepJobResult(results[0]!)?.timings ?? {};
      const order = JOB_PHASES.map((phase) => t[phase]);
      expect(order.every((v) => typeof v === 'number')).toBe(true);
      expect([...(order as number[])].sort((x, y) => x - y)).toEqual(order);
    });

    it('shared mode: a worker with an empty home runs the step in the mounted workspace path', {
      timeout: TIMEOUT,
    }, async () => {
      env = await makeEnv({}, () => bridgeQueue(redis.url));
      await env.repos.agents.add({
        name: 'gitagent',
        engine: 'command',
        argv: [process.execPath, GIT_AGENT],
      });
      const o = await env.open({ worker: false });
      env.workflow('one', workflowYaml('one', [['make', 'write shared.txt in place']]));
      const w = await worker('shared-worker');
      const run = await o.startRun({
        workflow: 'one',
        workspace: env.workspace,
        spec: 'shared mode',
        actor: ALICE,
      });
      expect((await o.waitUntilIdle(run.id)).status).toBe('completed');
      expect(fs.readFileSync(path.join(env.workspace, 'shared.txt'), 'utf8')).toBe('in place\n');
      expect(fs.readFileSync(await o.logPath(run.id, 'make'), 'utf8')).toContain(
        `cwd=${env.workspace}`,
      );
      expect(fs.readdirSync(w.home)).not.toContain('bridge.db');
    });

    it("two steps on two workers (runsOn labels): the second starts from the first one's commit", {
      timeout: TIMEOUT,
    }, async () => {
      const { env, o } = await bridge();
      env.workflow(
        'two',
        workflowYaml('two', [
          ['first', 'write first.txt from the first worker', 'alpha'],
          ['second', 'need first.txt\nwrite second.txt from the second worker', 'beta'],
        ]),
      );
      const a = await worker('wa', ['--label', 'alpha']);
      const b = await worker('wb', ['--label', 'beta']);
      const run = await o.startRun({
        workflow: 'two',
        workspace: env.workspace,
        spec: 'two workers',
        actor: ALICE,
      });
      const state = await o.waitUntilIdle(run.id);
      expect(state.status).toBe('completed');
      const branch = `phasebridge/${run.id}`;
      expect(git(env.workspace, 'show', `${branch}:first.txt`)).toBe('from the first worker');
      expect(git(env.workspace, 'show', `${branch}:second.txt`)).toBe('from the second worker');
      expect(git(env.workspace, 'rev-list', '--count', `main..${branch}`)).toBe('2');
      // Each step ran in its own worker's folder; the second saw the first's file there.
      const first = fs.readFileSync(await o.logPath(run.id, 'first'), 'utf8');
      const second = fs.readFileSync(await o.logPath(run.id, 'second'), 'utf8');
      expect(first).toContain(`cwd=${path.join(a.home, 'work')}`);
      expect(second).toContain(`cwd=${path.join(b.home, 'work')}`);
      expect(second).toContain('saw first.txt: from the first worker');
      expect(fs.existsSync(path.join(a.home, 'work', 'runs', run.id, 'second.txt'))).toBe(false);
      // `doctor` lists both workers with their labels (from the registry in Redis).
      const doctor = await runCliAsync(['doctor'], path.join(env.dir, 'doctor-home'), env.dir, {
        REDIS_URL: redis.url,
      });
      expect(doctor.out).toMatch(
        /workers.*2: .*labels alpha.*labels beta|workers.*2: .*labels beta.*labels alpha/,
      );
    });

    it("the bridge's own worker leaves a runsOn step to a worker with the label", {
      timeout: TIMEOUT,
    }, async () => {
      env = await makeEnv({}, () => bridgeQueue(redis.url));
      gitFixture(env.dir, env.workspace);
      await env.repos.agents.add({
        name: 'gitagent',
        engine: 'command',
        argv: [process.execPath, GIT_AGENT],
      });
      const o = await env.open({ worker: { concurrency: 1 }, workspaceMode: 'git' });
      env.workflow('gpu', workflowYaml('gpu', [['train', 'write model.bin trained', 'gpu']]));
      const run = await o.startRun({
        workflow: 'gpu',
        workspace: env.workspace,
        spec: 'gpu label',
        actor: ALICE,
      });
      // The in-process worker (no labels) keeps putting the job back; nothing starts.
      await holdsFor(
        async () => (await o.getRun(run.id)).steps[0]!.status === 'queued',
        1500,
        'the gpu step started without a gpu worker',
      );
      const gpu = await worker('gpu', ['--label', 'gpu']);
      const state = await o.waitUntilIdle(run.id);
      expect(state.status).toBe('completed');
      const log = fs.readFileSync(await o.logPath(run.id, 'train'), 'utf8');
      expect(log).toContain(`cwd=${path.join(gpu.home, 'work')}`);
    });

    it('running workers are listed on the console page and in /metrics; a stopped one drops out', {
      timeout: TIMEOUT,
    }, async () => {
      env = await makeEnv({}, () => bridgeQueue(redis.url));
      const gpu = await worker('gpu', ['--label', 'gpu,big']);
      await worker('codex', ['--engines', 'codex']);
      const watch = new WorkerWatch(
        () => env!.queue.listWorkers!(),
        createLogger({ level: 'silent' }),
      );
      await watch.start();
      const metrics = new BridgeMetrics({
        log: memoryLog(),
        processMetrics: false,
        workersByKind: async () => {
          await watch.refresh();
          return watch.counts();
        },
        runningByKind: async () => watch.running(),
      });
      const c = await startConsole({
        routes: (channel) => [{ prefix: '/metrics', handler: channel.protect(metrics.handler()) }],
      });
      try {
        c.channel.setWorkerStates(() =>
          watch.latest.map((w) => ({ name: `${w.host}/${w.pid}`, detail: describeWorker(w) })),
        );
        const b = await login(c);
        const page = await (await fetch(`${c.base}/`, { headers: { cookie: b.cookie } })).text();
        expect(page).toContain(
          `/${gpu.child.pid} (worker; labels gpu,big; engines all; running 0/1)`,
        );
        expect(page).toContain('labels -; engines codex; running 0/1');
        const scrape = async () =>
          (await fetch(`${c.base}/metrics`, { headers: { cookie: b.cookie } })).text();
        expect(await scrape()).toContain('phasebridge_workers{kind="worker"} 2');
        await gpu.stop(); // a clean stop removes its record at once
        expect(await scrape()).toContain('phasebridge_workers{kind="worker"} 1');
      } finally {
        watch.stop();
        await c.dispose();
      }
    });

    it('a worker killed mid-step: the log was live, a stray push does not trip the re-take', {
      timeout: TIMEOUT,
    }, async () => {
      const { env, o } = await bridge();
      env.workflow(
        'slow',
        workflowYaml('slow', [
          ['work', 'say working hard\nwrite work.txt done properly\nslow 60000'],
          ['check', 'need work.txt'],
        ]),
      );
      const doomed = await worker('doomed', [], { SLOW_AGENT: '1' });
      const run = await o.startRun({
        workflow: 'slow',
        workspace: env.workspace,
        spec: 'killed mid-step',
        actor: ALICE,
      });
      // The agent's output reaches the bridge's log file while it still runs.
      const logFile = await o.logPath(run.id, 'work');
      const live = await waitFor(
        () => {
          const text = fs.existsSync(logFile) ? fs.readFileSync(logFile, 'utf8') : '';
          return text.includes('sleeping 60000 ms') ? text : undefined;
        },
        30_000,
        'the live log',
      );
      expect(live).toContain('working hard');
      const agentPid = Number(/agent pid=(\d+)/.exec(live)?.[1]);
      await doomed.kill();
      process.kill(agentPid, 'SIGKILL'); // its orphaned agent, so it cannot write any more
      // As if the dead worker had pushed a half-finished commit to the run branch.
      const origin = git(env.workspace, 'remote', 'get-url', 'origin');
      const stray = path.join(env.dir, 'stray');
      git(env.dir, 'clone', '--quiet', '--branch', `phasebridge/${run.id}`, origin, stray);
      fs.writeFileSync(path.join(stray, 'half.txt'), 'half\n');
      git(stray, 'add', '.');
      git(stray, 'commit', '--quiet', '-m', 'half-pushed');
      git(stray, 'push', '--quiet', 'origin', `HEAD:phasebridge/${run.id}`);

      await worker('rescuer');
      const state = await o.waitUntilIdle(run.id);
      expect(state.status).toBe('completed');
      const branch = `phasebridge/${run.id}`;
      expect(git(env.workspace, 'show', `${branch}:work.txt`)).toBe('done properly');
      expect(git(env.workspace, 'ls-tree', '--name-only', branch)).not.toContain('half.txt');
      expect(git(env.dir, '--git-dir', origin, 'rev-parse', branch)).toBe(
        git(env.workspace, 'rev-parse', branch),
      );
    });
  });
} else {
  describe('remote workers', () => {
    it.skip('needs redis-server (apt-get install -y redis-server, or set REDIS_URL)', () => {});
  });
  process.stderr.write(NO_REDIS_BANNER);
}
