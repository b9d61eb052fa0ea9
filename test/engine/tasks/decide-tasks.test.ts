/**
 * The parallel `tasks` step in the pure engine: the task list is asked for, tasks run up to
 * maxWorkers at once, dependencies first and by priority, each with its own attempts and result;
 * failFast / continue; retry re-runs only unfinished tasks; cancel stops every task.
 */
import { describe, expect, it } from 'vitest';
import type { Effect } from '../../../src/engine/events.ts';
import { replay } from '../../../src/engine/evolve.ts';
import type { TaskSpec } from '../../../src/engine/tasks/types.ts';
import { Harness, T1, wf } from '../harness.ts';

function flow(policy: 'failFast' | 'continue', maxWorkers = 2, retries = 0) {
  return wf(`
id: par
steps:
  - { id: plan, agent: a, prompt: plan it }
  - id: work
    agent: coder
    prompt: do the task
    tasks: { file: tasks.json, maxWorkers: ${maxWorkers}, policy: ${policy} }
    ${retries > 0 ? `retries: { count: ${retries}, backoff: 1s }` : ''}
  - { id: ship, agent: a, prompt: ship it }
`);
}

const task = (id: string, priority = 0, dependsOn: string[] = []): TaskSpec => ({
  id,
  title: `title of ${id}`,
  priority,
  dependsOn,
});

const queuedTasks = (effects: Effect[]) =>
  effects.flatMap((e) => (e.type === 'enqueueTask' ? [e.taskId] : []));

/** Starts the run, finishes `plan`, hands the engine the task list. */
function planned(
  h: Harness,
  tasks: TaskSpec[],
  policy: 'failFast' | 'continue' = 'failFast',
  n = 2,
  r = 0,
) {
  h.start(flow(policy, n, r));
  const { effects } = h.finish();
  const load = effects.find((e) => e.type === 'loadTasks');
  expect(load).toMatchObject({ type: 'loadTasks', stepId: 'work', file: 'tasks.json' });
  return h.ok({ type: 'tasksPlanned', stepId: 'work', attempt: h.step('work').attempt, tasks });
}

function finishTask(h: Harness, taskId: string, result?: { branch?: string; pr?: number }) {
  const t = h.step('work').tasks!.find((x) => x.id === taskId)!;
  return h.ok({
    type: 'taskFinished',
    stepId: 'work',
    taskId,
    attempt: t.attempt,
    exitCode: 0,
    directive: result ? { action: 'continue', result } : { action: 'continue' },
    telemetry: T1,
  });
}

function failTask(h: Harness, taskId: string, error = 'tests failed') {
  const t = h.step('work').tasks!.find((x) => x.id === taskId)!;
  return h.ok({ type: 'taskFailed', stepId: 'work', taskId, attempt: t.attempt, error });
}

describe('tasks step', () => {
  it('queues ready tasks by priority up to maxWorkers and a dependent only after its dependency', () => {
    const h = new Harness();
    const { effects } = planned(h, [task('a', 1), task('b', 5), task('c', 9, ['a']), task('d', 3)]);
    // c has the top priority but waits for a; b (5) and d (3) beat a (1).
    expect(queuedTasks(effects)).toEqual(['b', 'd']);
    const prompt = effects.find((e) => e.type === 'enqueueTask' && e.taskId === 'b');
    expect(prompt).toMatchObject({ agent: 'coder', prompt: 'do the task\n\nTask b: title of b' });
    expect(queuedTasks(finishTask(h, 'b').effects)).toEqual(['a']);
    expect(queuedTasks(finishTask(h, 'a').effects)).toEqual(['c']);
    expect(queuedTasks(finishTask(h, 'd').effects)).toEqual([]);
    const last = finishTask(h, 'c', { branch: 'feat/c', pr: 12 });
    expect(last.types).toContain('stepCompleted');
    expect(h.current).toBe('ship');
    expect(h.step('ship').status).toBe('queued');
    expect(h.step('work').tasks!.find((t) => t.id === 'c')!.result).toEqual({
      branch: 'feat/c',
      pr: 12,
    });
    expect(h.step('work').telemetry.tokensIn).toBe(4 * T1.tokensIn);
    expect(replay(h.log)).toEqual(h.state);
  });

  it('failFast: one failure cancels the running tasks and blocks; retry re-runs only unfinished ones', () => {
    const h = new Harness();
    planned(h, [task('a'), task('b'), task('c')], 'failFast', 2);
    finishTask(h, 'a'); // c queued in a's slot
    const failed = failTask(h, 'b');
    expect(failed.effects).toContainEqual(
      expect.objectContaining({ type: 'cancelTask', taskId: 'c' }),
    );
    expect(h.run.status).toBe('blocked');
    expect(h.run.blocked?.reason).toContain('b (tests failed)');
    const retried = h.ok({ type: 'retry' });
    expect(queuedTasks(retried.effects).sort()).toEqual(['b', 'c']);
    const a = h.step('work').tasks!.find((t) => t.id === 'a')!;
    expect(a).toMatchObject({ status: 'completed', attempt: 1 });
  });

  it('continue: tasks depending on a failed one are skipped, the rest run, the step fails at the end', () => {
    const h = new Harness();
    planned(h, [task('a'), task('b', 0, ['a']), task('c')], 'continue', 2);
    const f = failTask(h, 'a');
    expect(f.types).toContain('taskSkipped');
    expect(h.run.status).toBe('active');
    expect(h.step('work').tasks!.find((t) => t.id === 'b')!.status).toBe('skipped');
    const end = finishTask(h, 'c');
    expect(end.types).toEqual(
      expect.arrayContaining(['taskCompleted', 'stepFailed', 'runBlocked']),
    );
    expect(h.run.blocked?.reason).toContain('1 of 3 task(s) failed: a');
  });

  it('retries a failing task by the step retries, with its own attempt count', () => {
    const h = new Harness();
    planned(h, [task('a'), task('b')], 'failFast', 2, 1);
    const f = failTask(h, 'a');
    expect(f.events.find((e) => e.type === 'taskFailed')).toMatchObject({ retryInMs: 1000 });
    expect(f.effects).toContainEqual(
      expect.objectContaining({ type: 'enqueueTask', taskId: 'a', attempt: 2, delayMs: 1000 }),
    );
    expect(h.step('work').tasks!.find((t) => t.id === 'a')).toMatchObject({ attempt: 2, tries: 2 });
    expect(h.step('work').tasks!.find((t) => t.id === 'b')).toMatchObject({ attempt: 1, tries: 1 });
  });

  it('refuses a report for a stale attempt and changes nothing', () => {
    const h = new Harness();
    planned(h, [task('a')], 'failFast', 1, 1);
    failTask(h, 'a');
    const r = h.rejected({
      type: 'taskFinished',
      stepId: 'work',
      taskId: 'a',
      attempt: 1,
      exitCode: 0,
      directive: { action: 'continue' },
      telemetry: T1,
    });
    expect(r.message).toContain('stale report');
  });

  it('a bad task list (cycle, unknown dependency) fails the step with the reason', () => {
    const h = new Harness();
    const d = planned(h, [task('a', 0, ['b']), task('b', 0, ['a'])]);
    expect(d.types).toEqual(['stepFailed', 'runBlocked']);
    expect(h.run.blocked?.reason).toContain('cycle: a → b → a');
    const h2 = new Harness();
    planned(h2, [task('a', 0, ['zz'])]);
    expect(h2.run.blocked?.reason).toContain('unknown task "zz"');
  });

  it('cancel stops every in-flight task; pause then resume re-queues only those', () => {
    const h = new Harness();
    planned(h, [task('a'), task('b'), task('c')], 'failFast', 2);
    finishTask(h, 'a');
    const paused = h.ok({ type: 'pause' });
    expect(
      paused.effects
        .filter((e) => e.type === 'cancelTask')
        .map((e) => (e as { taskId: string }).taskId)
        .sort(),
    ).toEqual(['b', 'c']);
    const resumed = h.ok({ type: 'resume' });
    expect(queuedTasks(resumed.effects).sort()).toEqual(['b', 'c']);
    const cancelled = h.ok({ type: 'cancel' });
    expect(cancelled.effects.filter((e) => e.type === 'cancelTask')).toHaveLength(2);
    expect(h.run.status).toBe('cancelled');
  });

  it('an interrupted task (job lost) runs again as a new attempt without counting as a failure', () => {
    const h = new Harness();
    planned(h, [task('a'), task('b')], 'failFast', 2);
    finishTask(h, 'a');
    const lost = h.ok({
      type: 'taskFailed',
      stepId: 'work',
      taskId: 'b',
      attempt: 1,
      error: 'interrupted',
      interrupted: true,
    });
    expect(queuedTasks(lost.effects)).toEqual(['b']);
    expect(h.step('work').tasks!.find((t) => t.id === 'b')).toMatchObject({
      status: 'queued',
      attempt: 2,
      tries: 1,
    });
    expect(h.step('work').tasks!.find((t) => t.id === 'a')).toMatchObject({ attempt: 1 });
  });
});
