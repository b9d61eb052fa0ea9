/**
 * A trigger's or a task's job that the ledger queued but that never reached the queue (the
 * process died, or lost its Redis, between the commit and the enqueue): the next orchestrator
 * enqueues that very job, same attempt, and the run goes on as if nothing happened. Before, the
 * trigger was reported failed (the run needed a human) and the task was re-run as an interrupted
 * attempt. A step's job is covered in restart.test.ts.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { ZERO_TELEMETRY } from '../../../src/engine/model.ts';
import { ALICE, ledgerOf, makeEnv, repeatedKeys, type TestEnv, waitFor } from './helpers.ts';

let env: TestEnv | undefined;
afterEach(async () => {
  await env?.dispose();
  env = undefined;
});

/** Finishes the run's `stepId` by hand (no worker runs), with `directive`. */
async function finishStep(
  o: Awaited<ReturnType<TestEnv['open']>>,
  runId: string,
  stepId: string,
  directive: { action: 'continue' } | { action: 'trigger'; triggerAgentId: string; reason: string },
): Promise<void> {
  const started = await o.command(runId, `test:${stepId}:started`, {
    type: 'stepStarted',
    stepId,
    attempt: 1,
    actor: ALICE,
  });
  expect(started.ok).toBe(true);
  const finished = await o.command(runId, `test:${stepId}:finished`, {
    type: 'stepFinished',
    stepId,
    attempt: 1,
    exitCode: 0,
    directive,
    telemetry: ZERO_TELEMETRY,
    actor: ALICE,
  });
  expect(finished.ok).toBe(true);
}

it("enqueues again a trigger's job that never reached the queue: same attempt, run not failed", async () => {
  env = await makeEnv();
  env.workflow(
    'trig',
    'id: trig\nsteps:\n  - id: build\n    agent: demo\n    prompt: "demo: sleep=10"\n',
  );
  const first = await env.open({ worker: false });
  const run = await first.startRun({
    workflow: 'trig',
    workspace: env.workspace,
    spec: 's',
    actor: ALICE,
  });
  await finishStep(first, run.id, 'build', {
    action: 'trigger',
    triggerAgentId: 'demo',
    reason: 'demo: sleep=10',
  });
  const jobId = `${run.id}:build+trigger:1`;
  expect((await env.queue.get(jobId))?.state).toBe('waiting');
  await first.close();
  // As if the process died (or lost its queue) between the commit and the enqueue.
  env.db.sqlite.prepare('DELETE FROM jobs WHERE id = ?').run(jobId);

  const second = await env.open();
  const state = await second.waitUntilIdle(run.id);
  expect(state.status).toBe('completed');
  const events = ledgerOf(state).flatMap((e) => e.events);
  const finished = events.filter((e) => e.type === 'triggerFinished');
  expect(finished).toHaveLength(1);
  expect(finished[0]).toMatchObject({ attempt: 1, exitCode: 0 });
  expect(finished[0]).not.toHaveProperty('error');
  expect(events.filter((e) => e.type === 'triggerQueued')).toHaveLength(1);
  expect((await env.queue.get(jobId))?.state).toBe('completed');
  expect(repeatedKeys(ledgerOf(state))).toEqual([]);
});

it("enqueues again a queued task's job that never reached the queue: same attempt, not interrupted", async () => {
  env = await makeEnv();
  env.workflow(
    'par',
    `id: par
steps:
  - { id: plan, agent: demo, prompt: "demo: sleep=10" }
  - id: work
    agent: demo
    prompt: "demo: sleep=10"
    tasks: { file: tasks.json, maxWorkers: 2 }
`,
  );
  const tasks = [1, 2].map((i) => ({
    id: `t${i}`,
    title: `task ${i}`,
    priority: 3 - i,
    depends_on: [],
  }));
  fs.writeFileSync(path.join(env.workspace, 'tasks.json'), JSON.stringify({ tasks }));
  const first = await env.open({ worker: false });
  const run = await first.startRun({
    workflow: 'par',
    workspace: env.workspace,
    spec: 's',
    actor: ALICE,
  });
  await finishStep(first, run.id, 'plan', { action: 'continue' });
  // The task list is read after the commit; both tasks are queued, no worker takes them.
  await waitFor(async () => (await first.getRun(run.id)).steps[1]?.tasks?.length === 2);
  const jobIds = ['t1', 't2'].map((t) => `${run.id}:work+task+${t}:1`);
  await waitFor(async () => (await env!.queue.get(jobIds[1]!))?.state === 'waiting');
  await first.close();
  env.db.sqlite.prepare('DELETE FROM jobs WHERE id = ?').run(jobIds[0]);

  const second = await env.open();
  const state = await second.waitUntilIdle(run.id);
  expect(state.status).toBe('completed');
  expect(state.steps[1]!.tasks!.map((t) => [t.id, t.status, t.attempt])).toEqual([
    ['t1', 'completed', 1],
    ['t2', 'completed', 1],
  ]);
  const events = ledgerOf(state).flatMap((e) => e.events);
  expect(events.filter((e) => e.type === 'taskFailed')).toEqual([]);
  expect(events.filter((e) => e.type === 'taskQueued')).toHaveLength(2);
  for (const id of jobIds) expect((await env.queue.get(id))?.state).toBe('completed');
  expect(repeatedKeys(ledgerOf(state))).toEqual([]);
});
