/**
 * A worker process SIGKILLed in the middle of a `tasks` step: the tasks it had completed are not
 * run again; the task it was running is taken again by another worker process (its lease
 * expired) and applied once; the run completes.
 */
import { fileURLToPath } from 'node:url';
import { afterEach, expect, it } from 'vitest';
import { type Child, startChild } from './fixtures/child.ts';
import { ALICE, FAST_LEASES, ledgerOf, makeEnv, repeatedKeys, type TestEnv } from './helpers.ts';

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

it('a worker SIGKILLed mid-task: only the unfinished task runs again', async () => {
  env = await makeEnv(FAST_LEASES);
  env.workflow(
    'crash',
    `id: crash
steps:
  - { id: plan, agent: demo, prompt: "demo: sleep=10 tasks=3" }
  - id: work
    agent: demo
    prompt: "demo: sleep=600"
    tasks: { file: tasks.json, maxWorkers: 2 }
`,
  );
  const o = await env.open({ worker: false });
  const args = [env.dbFile, JSON.stringify(FAST_LEASES), '2'];
  const first = startChild(WORKER, args);
  children.push(first);
  await first.line(/^ready$/);
  const run = await o.startRun({
    workflow: 'crash',
    workspace: env.workspace,
    spec: 's',
    actor: ALICE,
  });
  // t1 and t2 (higher priority) run first; t3 starts once one of them is done.
  const t3 = `${run.id}:work+task+t3:1`;
  const spawned = await first.line(new RegExp(`^spawned ${t3.replace(/\+/g, '\\+')} (\\d+)$`));
  first.process.kill('SIGKILL');
  await first.exited();
  process.kill(-Number(spawned[1]), 'SIGKILL'); // the orphaned agent of the dead worker
  const doneBefore = (await o.getRun(run.id)).steps[1]!.tasks!.filter(
    (t) => t.status === 'completed',
  );
  // t3 started in the slot of whichever of t1/t2 finished first (the other may be done too).
  expect(doneBefore.length).toBeGreaterThan(0);
  expect(doneBefore.map((t) => t.id)).not.toContain('t3');

  const second = startChild(WORKER, args);
  children.push(second);
  const state = await o.waitUntilIdle(run.id);
  expect(state.status).toBe('completed');
  expect(state.steps[1]!.tasks!.map((t) => [t.id, t.status, t.attempt])).toEqual([
    ['t1', 'completed', 1],
    ['t2', 'completed', 1],
    ['t3', 'completed', 1],
  ]);
  // The queue took t3's job again (the retake; once more if a loaded machine let the new
  // worker's lease lapse, which the engine still applies once: attempt 1 above, no repeated key).
  expect(await env.queue.get(t3)).toMatchObject({ state: 'completed' });
  expect((await env.queue.get(t3))!.attempts).toBeGreaterThanOrEqual(2);
  for (const id of doneBefore.map((t) => t.id)) {
    expect(await env.queue.get(`${run.id}:work+task+${id}:1`)).toMatchObject({ attempts: 1 });
  }
  expect(second.lines.filter((l) => l.startsWith('spawned ')).map((l) => l.split(' ')[1])).toEqual(
    expect.not.arrayContaining(doneBefore.map((t) => `${run.id}:work+task+${t.id}:1`)),
  );
  expect(repeatedKeys(ledgerOf(state))).toEqual([]);
});
