/**
 * Parallel `tasks` steps through the orchestrator, the embedded queue and real agent processes
 * (the demo agent): the previous step writes the task list, tasks run as their own jobs up to
 * maxWorkers at once with their own logs and results, failures block with the task named, a
 * missing list is a clear failure, and cancel stops every running task's agent.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { RunEvent } from '../../../src/engine/events.ts';
import { taskLogPath } from '../../../src/jobs/orchestrator/task-jobs.ts';
import { ALICE, alive, ledgerOf, makeEnv, repeatedKeys, type TestEnv, waitFor } from './helpers.ts';

let env: TestEnv | undefined;
afterEach(async () => {
  await env?.dispose();
  env = undefined;
});

function workflow(planDemo: string, workDemo: string, extra = ''): string {
  return `id: par
steps:
  - id: plan
    agent: demo
    prompt: "demo: sleep=10 ${planDemo}"
  - id: work
    agent: demo
    prompt: "demo: ${workDemo}"
    tasks: { file: tasks.json, maxWorkers: 2${extra} }
  - id: ship
    agent: demo
    prompt: "demo: sleep=10"
`;
}

/** Most tasks in flight at once, from the ledger's task events in commit order. */
function maxInFlight(events: RunEvent[]): number {
  const flying = new Set<string>();
  let max = 0;
  for (const e of events) {
    if (e.type === 'taskQueued') flying.add(e.taskId);
    if (e.type === 'taskCompleted' || e.type === 'taskFailed' || e.type === 'taskCancelled') {
      flying.delete(e.taskId);
    }
    max = Math.max(max, flying.size);
  }
  return max;
}

describe('tasks step (embedded queue)', () => {
  it('runs 4 tasks on 2 slots with their own logs and results, then continues', async () => {
    env = await makeEnv();
    env.workflow('par', workflow('tasks=4', 'sleep=300'));
    const o = await env.open({ worker: { concurrency: 3 } });
    const run = await o.startRun({
      workflow: 'par',
      workspace: env.workspace,
      spec: 's',
      actor: ALICE,
    });
    const state = await o.waitUntilIdle(run.id);
    expect(state.status).toBe('completed');
    const work = state.steps.find((s) => s.id === 'work')!;
    expect(work.tasks!.map((t) => [t.id, t.status, t.attempt, t.result?.branch])).toEqual([
      ['t1', 'completed', 1, 'demo/t1'],
      ['t2', 'completed', 1, 'demo/t2'],
      ['t3', 'completed', 1, 'demo/t3'],
      ['t4', 'completed', 1, 'demo/t4'],
    ]);
    const events = ledgerOf(state).flatMap((e) => e.events);
    // Two slots used, never three (the worker had three).
    expect(maxInFlight(events)).toBe(2);
    const started = events.filter((e) => e.type === 'taskStarted').map((e) => e.taskId);
    expect(started.sort()).toEqual(['t1', 't2', 't3', 't4']);
    for (const id of ['t1', 't2', 't3', 't4']) {
      const log = fs.readFileSync(taskLogPath(env.workspace, run.id, 'work', id, 1), 'utf8');
      expect(log).toContain(`Task ${id}: demo task`);
    }
    expect(state.steps.find((s) => s.id === 'ship')!.status).toBe('completed');
    expect(repeatedKeys(ledgerOf(state))).toEqual([]);
  });

  it('runs a dependency chain one task at a time, in order', async () => {
    env = await makeEnv();
    env.workflow('par', workflow('tasks=3 taskdeps=chain', 'sleep=20'));
    const o = await env.open();
    const run = await o.startRun({
      workflow: 'par',
      workspace: env.workspace,
      spec: 's',
      actor: ALICE,
    });
    const state = await o.waitUntilIdle(run.id);
    expect(state.status).toBe('completed');
    const events = ledgerOf(state).flatMap((e) => e.events);
    expect(maxInFlight(events)).toBe(1);
    const done = events.filter((e) => e.type === 'taskCompleted').map((e) => e.taskId);
    expect(done).toEqual(['t1', 't2', 't3']);
  });

  it('blocks naming the failed task (failFast); retry re-runs only tasks that did not complete', async () => {
    env = await makeEnv();
    env.workflow('par', workflow('tasks=3 taskdeps=chain', 'sleep=20 failtask=t2'));
    const o = await env.open();
    const run = await o.startRun({
      workflow: 'par',
      workspace: env.workspace,
      spec: 's',
      actor: ALICE,
    });
    const state = await o.waitUntilIdle(run.id);
    expect(state.status).toBe('blocked');
    expect(state.blocked?.reason).toContain('step work failed: 1 of 3 task(s) failed: t2');
    // The agent fails t2 again on retry: t1 must not run a second time.
    const r = await o.command(run.id, 'cli:retry-1', { type: 'retry', actor: ALICE });
    expect(r.ok).toBe(true);
    const again = await o.waitUntilIdle(run.id);
    const tasks = again.steps.find((s) => s.id === 'work')!.tasks!;
    expect(tasks.map((t) => [t.id, t.status, t.attempt])).toEqual([
      ['t1', 'completed', 1],
      ['t2', 'failed', 2],
      ['t3', 'pending', 0],
    ]);
  });

  it('a missing task list blocks the run saying which file', async () => {
    env = await makeEnv();
    env.workflow('par', workflow('', 'sleep=20'));
    const o = await env.open();
    const run = await o.startRun({
      workflow: 'par',
      workspace: env.workspace,
      spec: 's',
      actor: ALICE,
    });
    const state = await o.waitUntilIdle(run.id);
    expect(state.status).toBe('blocked');
    expect(state.blocked?.reason).toContain('cannot read the task list tasks.json');
  });

  it('cancel stops every running task agent', async () => {
    env = await makeEnv();
    env.workflow('par', workflow('tasks=2', 'hang'));
    const pids: number[] = [];
    const o = await env.open({ onAgentSpawn: (s) => pids.push(s.pid) });
    const run = await o.startRun({
      workflow: 'par',
      workspace: env.workspace,
      spec: 's',
      actor: ALICE,
    });
    await waitFor(() => pids.length === 3, 10_000, 'plan and both task agents');
    const taskPids = pids.slice(1);
    await waitFor(async () => {
      const s = await o.getRun(run.id);
      return s.steps[1]!.tasks?.every((t) => t.status === 'running');
    });
    const r = await o.command(run.id, 'cli:cancel-1', { type: 'cancel', actor: ALICE });
    expect(r.ok && r.state.status).toBe('cancelled');
    await waitFor(() => taskPids.every((p) => !alive(p)), 10_000, 'task agents to stop');
    expect(fs.existsSync(path.join(env.workspace, 'tasks.json'))).toBe(true);
  });
});
