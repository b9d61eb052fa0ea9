/**
 * How task events fold into a run's state, read as a person reads `status`: a task's new attempt
 * forgets the last one's times, error, result and worker; a completion keeps what it hands on and
 * adds its cost to the task and the step; a retry re-runs only failed and skipped tasks, from
 * zero tries; a crash sends in-flight tasks back to pending; an event naming a step or task the
 * run does not have is a corrupt ledger, never folded silently.
 */
import { describe, expect, it } from 'vitest';
import type { RunEvent } from '../../../src/engine/events.ts';
import { evolve } from '../../../src/engine/evolve.ts';
import type { RunState } from '../../../src/engine/model.ts';
import type { TaskSpec } from '../../../src/engine/tasks/types.ts';
import { CorruptStateError } from '../../../src/errors.ts';
import { Harness, T1, wf } from '../harness.ts';

const FLOW = wf(`
id: par
steps:
  - { id: plan, agent: a, prompt: plan it }
  - id: work
    agent: coder
    prompt: do the task
    tasks: { file: tasks.json, maxWorkers: 2, policy: continue }
    retries: { count: 1, backoff: 1s }
`);

const spec = (id: string, dependsOn: string[] = []): TaskSpec => ({
  id,
  title: `title of ${id}`,
  priority: 0,
  dependsOn,
});

function planned(tasks: TaskSpec[]) {
  const h = new Harness();
  h.start(FLOW);
  h.finish();
  h.ok({ type: 'tasksPlanned', stepId: 'work', attempt: 1, tasks });
  return h;
}

const taskOf = (h: Harness, id: string) => h.step('work').tasks!.find((t) => t.id === id)!;

/** Folds one event as the ledger would hand it over (some names a step or task that is not there). */
const fold = (state: RunState, e: { type: RunEvent['type'] } & Record<string, unknown>) =>
  evolve(state, { at: '2026-12-02T11:00:00.000Z', ...e } as unknown as RunEvent);

describe('task events folded into the run', () => {
  it('a new attempt forgets the last one: times, error, result and worker', () => {
    const h = planned([spec('a')]);
    h.ok({ type: 'taskStarted', stepId: 'work', taskId: 'a', attempt: 1, worker: 'w-1' });
    expect(taskOf(h, 'a')).toMatchObject({ status: 'running', worker: 'w-1' });
    expect(taskOf(h, 'a').startedAt).toBeDefined();
    h.ok({
      type: 'taskFailed',
      stepId: 'work',
      taskId: 'a',
      attempt: 1,
      error: 'flaky',
      telemetry: T1,
    });
    const retried = taskOf(h, 'a');
    expect(retried).toMatchObject({ status: 'queued', attempt: 2, tries: 2 });
    for (const gone of ['startedAt', 'finishedAt', 'error', 'result', 'worker']) {
      expect(retried).not.toHaveProperty(gone);
    }
    // The cost of the failed attempt stays counted.
    expect(retried.telemetry).toEqual(T1);
  });

  it('a completion keeps its result, clears an old error and adds its cost to task and step', () => {
    const h = planned([spec('a'), spec('b')]);
    const stepBefore = h.step('work').telemetry;
    h.ok({
      type: 'taskFinished',
      stepId: 'work',
      taskId: 'a',
      attempt: 1,
      exitCode: 0,
      directive: { action: 'continue', result: { branch: 'feat/a' } },
      telemetry: T1,
    });
    expect(taskOf(h, 'a')).toMatchObject({ status: 'completed', result: { branch: 'feat/a' } });
    expect(taskOf(h, 'a').finishedAt).toBeDefined();
    expect(h.step('work').telemetry.tokensIn).toBe(stepBefore.tokensIn + T1.tokensIn);
    h.ok({
      type: 'taskFinished',
      stepId: 'work',
      taskId: 'b',
      attempt: 1,
      exitCode: 0,
      directive: { action: 'continue' },
      telemetry: T1,
    });
    expect(taskOf(h, 'b')).not.toHaveProperty('result');
    expect(h.step('work').telemetry.costUsd).toBeCloseTo(stepBefore.costUsd + 2 * T1.costUsd);
  });

  it("a human's retry re-runs failed and skipped tasks from zero tries, keeps completed ones", () => {
    const h = planned([spec('a'), spec('b', ['a']), spec('c')]);
    const fail = () =>
      h.ok({
        type: 'taskFailed',
        stepId: 'work',
        taskId: 'a',
        attempt: taskOf(h, 'a').attempt,
        error: 'x',
      });
    fail();
    fail(); // the step's one retry is used: a fails for good, b is skipped
    h.ok({
      type: 'taskFinished',
      stepId: 'work',
      taskId: 'c',
      attempt: 1,
      exitCode: 0,
      directive: { action: 'continue' },
      telemetry: T1,
    });
    expect(h.run.status).toBe('blocked');
    expect(taskOf(h, 'b')).toMatchObject({
      status: 'skipped',
      error: 'a task it depends on failed: a',
    });
    h.ok({ type: 'retry' });
    expect(taskOf(h, 'a')).toMatchObject({ status: 'queued', tries: 1 });
    expect(taskOf(h, 'a')).not.toHaveProperty('error');
    expect(taskOf(h, 'b')).toMatchObject({ status: 'pending', tries: 0 });
    expect(taskOf(h, 'b')).not.toHaveProperty('error');
    expect(taskOf(h, 'b')).not.toHaveProperty('finishedAt');
    expect(taskOf(h, 'c')).toMatchObject({ status: 'completed', attempt: 1 });
  });

  it('a crash mid-step sends in-flight tasks back to pending and keeps finished ones', () => {
    const h = planned([spec('a'), spec('b'), spec('c')]);
    h.ok({ type: 'taskStarted', stepId: 'work', taskId: 'a', attempt: 1 });
    h.ok({
      type: 'taskFinished',
      stepId: 'work',
      taskId: 'b',
      attempt: 1,
      exitCode: 0,
      directive: { action: 'continue' },
      telemetry: T1,
    });
    const before = h.run;
    expect(before.steps[1]!.tasks!.map((t) => t.status)).toEqual([
      'running',
      'completed',
      'queued',
    ]);
    const after = fold(before, { type: 'stepInterrupted', stepId: 'work', attempt: 1 });
    expect(after.steps[1]!.status).toBe('failed');
    expect(after.steps[1]!.tasks!.map((t) => t.status)).toEqual([
      'pending',
      'completed',
      'pending',
    ]);
    // The state it was given is untouched.
    expect(before.steps[1]!.tasks!.map((t) => t.status)).toEqual([
      'running',
      'completed',
      'queued',
    ]);
  });

  it('an event naming a step or task the run does not have is a corrupt ledger', () => {
    const h = planned([spec('a')]);
    const started = { type: 'taskStarted', attempt: 1 } as const;
    expect(() => fold(h.run, { ...started, stepId: 'nope', taskId: 'a' })).toThrow(
      CorruptStateError,
    );
    expect(() => fold(h.run, { ...started, stepId: 'nope', taskId: 'a' })).toThrow(
      `run ${h.run.id}: event names unknown step nope`,
    );
    expect(() => fold(h.run, { ...started, stepId: 'work', taskId: 'zz' })).toThrow(
      `run ${h.run.id}: event names unknown task work/zz`,
    );
    // The first step has no task list at all.
    expect(() => fold(h.run, { ...started, stepId: 'plan', taskId: 'a' })).toThrow(
      `run ${h.run.id}: event names unknown task plan/a`,
    );
  });
});
