/**
 * A worker process SIGKILLed in the middle of a step: its job's lease expires, another worker
 * process takes the job again, and the orchestrator applies the job's result exactly once.
 */
import { fileURLToPath } from 'node:url';
import { afterEach, expect, it } from 'vitest';
import { type Child, startChild } from './fixtures/child.ts';
import {
  ALICE,
  FAST_LEASES,
  ledgerOf,
  makeEnv,
  repeatedKeys,
  type TestEnv,
  waitFor,
} from './helpers.ts';

const WORKER = fileURLToPath(new URL('./fixtures/worker-child.ts', import.meta.url));

let env: TestEnv | undefined;
const children: Child[] = [];
afterEach(async () => {
  for (const c of children.splice(0)) {
    c.process.kill('SIGKILL');
    await c.exited();
  }
  await env?.dispose();
  env = undefined;
});

it('a worker SIGKILLed mid-step: the job is taken again and applied once', async () => {
  env = await makeEnv(FAST_LEASES);
  env.workflow(
    'crash',
    [
      'id: crash',
      'steps:',
      '  - id: slow',
      '    agent: demo',
      '    prompt: "demo: sleep=1200"',
      '  - id: next',
      '    agent: demo',
      '    prompt: "demo: sleep=20"',
      '',
    ].join('\n'),
  );
  const o = await env.open({ worker: false });
  const workerArgs = [env.dbFile, JSON.stringify(FAST_LEASES)];
  const first = startChild(WORKER, workerArgs);
  children.push(first);
  await first.line(/^ready$/);

  const run = await o.startRun({
    workflow: 'crash',
    workspace: env.workspace,
    spec: 's',
    actor: ALICE,
  });
  const jobId = `${run.id}:slow:1`;
  const spawned = await first.line(new RegExp(`^spawned ${jobId} (\\d+)$`));
  first.process.kill('SIGKILL');
  await first.exited();
  // The dead worker's agent would run on as an orphan; stop it so only the retake's work counts.
  process.kill(-Number(spawned[1]), 'SIGKILL');

  const second = startChild(WORKER, workerArgs);
  children.push(second);
  await second.line(new RegExp(`^spawned ${jobId} \\d+$`));
  const state = await o.waitUntilIdle(run.id);
  expect(state.status).toBe('completed');
  expect(state.steps.map((s) => [s.id, s.status, s.attempt])).toEqual([
    ['slow', 'completed', 1],
    ['next', 'completed', 1],
  ]);

  const job = await env.queue.get(jobId);
  expect(job).toMatchObject({ state: 'completed', attempts: 2 });
  const entries = ledgerOf(state);
  expect(repeatedKeys(entries)).toEqual([]);
  const slowEvents = entries
    .flatMap((e) => e.events)
    .filter((e) => 'stepId' in e && e.stepId === 'slow')
    .map((e) => e.type);
  // The job id stands in as session until the demo agent prints its engine session_id.
  expect(slowEvents).toEqual([
    'stepQueued',
    'stepStarted',
    'sessionInitialized',
    'sessionInitialized',
    'stepCompleted',
  ]);
  await waitFor(async () => (await o.listRuns())[0]?.status === 'completed');
});

it('a worker in another process: the start and ::progress lines reach the orchestrator while the step runs', async () => {
  env = await makeEnv(FAST_LEASES);
  env.workflow(
    'remote',
    'id: remote\nsteps:\n  - id: work\n    agent: demo\n    prompt: "demo: sleep=900 progress=2"\n',
  );
  const o = await env.open({ worker: false });
  const seen: string[] = [];
  o.onUpdate((u) => {
    for (const e of u.events) if (e.type === 'stepStarted') seen.push('stepStarted');
  });
  o.onProgress((p) => seen.push(`progress ${p.stepId} ${p.text}`));
  const worker = startChild(WORKER, [env.dbFile, JSON.stringify(FAST_LEASES)]);
  children.push(worker);
  await worker.line(/^ready$/);
  const run = await o.startRun({
    workflow: 'remote',
    workspace: env.workspace,
    spec: 's',
    actor: ALICE,
  });
  await waitFor(() => seen.length === 3, 10_000, 'start and two progress lines');
  // All of it before the outcome: the step still runs.
  expect((await o.getRun(run.id)).steps[0]!.status).toBe('running');
  expect(seen).toEqual(['stepStarted', 'progress work step 1/2', 'progress work step 2/2']);
  expect((await o.waitUntilIdle(run.id)).status).toBe('completed');
});
