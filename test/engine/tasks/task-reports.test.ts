/**
 * What a tasks step says back to the workers and the people watching it: every report that does
 * not fit the run (unknown step or task, a step that is not a tasks step, a run or step that is
 * not running, a second start, telemetry that is not a count) is refused with its reason and
 * changes nothing; a task's failure names its cause (exit code, the agent's own reason) and its
 * retries back off by doubling; what a task hands on (branch, PR, commit) is kept and nothing else.
 */
import { describe, expect, it } from 'vitest';
import type { Effect, RunEvent } from '../../../src/engine/events.ts';
import type { TaskSpec } from '../../../src/engine/tasks/types.ts';
import { Harness, T1, wf } from '../harness.ts';

function flow(
  o: { policy?: string; retries?: string; timeout?: string; maxWorkers?: number } = {},
) {
  return wf(`
id: par
steps:
  - { id: plan, agent: a, prompt: plan it }
  - id: work
    agent: coder
    prompt: do the task
    tasks: { file: tasks.json, maxWorkers: ${o.maxWorkers ?? 2}, policy: ${o.policy ?? 'failFast'} }
    ${o.retries ? `retries: ${o.retries}` : ''}
    ${o.timeout ? `timeout: ${o.timeout}` : ''}
  - { id: ship, agent: a, prompt: ship it }
`);
}

const spec = (id: string, dependsOn: string[] = []): TaskSpec => ({
  id,
  title: `title of ${id}`,
  priority: 0,
  dependsOn,
});

/** A run whose `work` step has its task list laid out and its first tasks queued. */
function planned(tasks: TaskSpec[], o: Parameters<typeof flow>[0] = {}) {
  const h = new Harness();
  h.start(flow(o));
  h.finish();
  const planned = h.ok({ type: 'tasksPlanned', stepId: 'work', attempt: 1, tasks });
  return { h, planned };
}

const attemptOf = (h: Harness, taskId: string) =>
  h.step('work').tasks!.find((t) => t.id === taskId)!.attempt;

const finished = (h: Harness, taskId: string, extra: Record<string, unknown> = {}) =>
  ({
    type: 'taskFinished',
    stepId: 'work',
    taskId,
    attempt: attemptOf(h, taskId),
    exitCode: 0,
    directive: { action: 'continue' },
    telemetry: T1,
    ...extra,
  }) as const;

const event = <T extends RunEvent['type']>(events: RunEvent[], type: T) =>
  events.find((e) => e.type === type) as Extract<RunEvent, { type: T }> | undefined;

const enqueued = (effects: Effect[]) =>
  effects.filter((e): e is Extract<Effect, { type: 'enqueueTask' }> => e.type === 'enqueueTask');

describe('task reports that do not fit the run are refused and change nothing', () => {
  it('an unknown step, a step that is not a tasks step, an unknown task', () => {
    const { h } = planned([spec('a')]);
    expect(h.rejected({ ...finished(h, 'a'), stepId: 'nope' })).toEqual({
      code: 'NOT_FOUND',
      message: `run ${h.run.id} has no step nope`,
    });
    expect(h.rejected({ ...finished(h, 'a'), stepId: 'plan' })).toEqual({
      code: 'INVALID_INPUT',
      message: 'step plan is not a tasks step',
    });
    expect(h.rejected({ ...finished(h, 'a'), taskId: 'zz' })).toEqual({
      code: 'NOT_FOUND',
      message: 'step work has no task zz',
    });
  });

  it('a report while the run is paused, or while the step is not running', () => {
    const { h } = planned([spec('a')]);
    const report = finished(h, 'a');
    h.ok({ type: 'pause' });
    // A paused run is blocked (for a human) until resumed.
    expect(h.rejected(report)).toEqual({
      code: 'ILLEGAL_TRANSITION',
      message: `stale report for step work: run ${h.run.id} is blocked`,
    });
    // Before the task list is read the step is queued, not running: a task report is stale.
    const early = new Harness();
    early.start(flow());
    early.finish();
    expect(early.rejected({ ...report, attempt: 1 }).message).toBe(
      'stale report for step work: the step is queued, not running',
    );
  });

  it('a second start of the same attempt', () => {
    const { h } = planned([spec('a')]);
    h.ok({ type: 'taskStarted', stepId: 'work', taskId: 'a', attempt: 1 });
    expect(h.rejected({ type: 'taskStarted', stepId: 'work', taskId: 'a', attempt: 1 })).toEqual({
      code: 'ILLEGAL_TRANSITION',
      message: 'task work/a is already running',
    });
  });

  it('telemetry that is not a finite count, on a finish and on a failure', () => {
    for (const bad of [
      { ...T1, tokensIn: -1 },
      { ...T1, tokensOut: Number.NaN },
      { ...T1, cachedTokens: Number.POSITIVE_INFINITY },
      { ...T1, costUsd: -0.01 },
    ]) {
      const { h } = planned([spec('a')]);
      const expected = {
        code: 'INVALID_INPUT',
        message: 'telemetry values must be finite numbers >= 0',
      };
      expect(h.rejected(finished(h, 'a', { telemetry: bad }))).toEqual(expected);
      const failure = { type: 'taskFailed', stepId: 'work', taskId: 'a', attempt: 1 } as const;
      expect(h.rejected({ ...failure, error: 'x', telemetry: bad })).toEqual(expected);
    }
    // Zero is a count: accepted.
    const { h } = planned([spec('a')]);
    const zero = { tokensIn: 0, tokensOut: 0, cachedTokens: 0, costUsd: 0 };
    expect(h.ok(finished(h, 'a', { telemetry: zero })).types).toContain('taskCompleted');
  });

  it('a task list for an unknown step, a step that is not a tasks step, or an old attempt', () => {
    const h = new Harness();
    h.start(flow());
    h.finish();
    const list = { type: 'tasksPlanned' as const, attempt: 1, tasks: [spec('a')] };
    expect(h.rejected({ ...list, stepId: 'nope' }).code).toBe('NOT_FOUND');
    expect(h.rejected({ ...list, stepId: 'plan' })).toEqual({
      code: 'INVALID_INPUT',
      message: 'step plan is not a tasks step',
    });
    expect(h.rejected({ ...list, stepId: 'work', attempt: 2 })).toEqual({
      code: 'ILLEGAL_TRANSITION',
      message: 'stale task list for step work attempt 2',
    });
    h.ok({ ...list, stepId: 'work' });
    // The same list delivered twice: the second is stale, the tasks are not laid out again.
    expect(h.rejected({ ...list, stepId: 'work' }).message).toBe(
      'stale task list for step work attempt 1',
    );
    const paused = new Harness();
    paused.start(flow());
    paused.finish();
    paused.ok({ type: 'pause' });
    expect(paused.rejected({ ...list, stepId: 'work' }).message).toBe(
      'stale task list for step work attempt 1',
    );
  });
});

describe('what a task report records', () => {
  it("keeps the worker's id when it is a short string, and drops an empty or oversized one", () => {
    for (const [worker, kept] of [
      ['worker-7', 'worker-7'],
      ['w'.repeat(200), 'w'.repeat(200)],
      ['w'.repeat(201), undefined],
      ['', undefined],
    ] as const) {
      const { h } = planned([spec('a')]);
      const { events } = h.ok({
        type: 'taskStarted',
        stepId: 'work',
        taskId: 'a',
        attempt: 1,
        worker,
      });
      expect(event(events, 'taskStarted')?.worker).toBe(kept);
      expect(h.step('work').tasks![0]!.worker).toBe(kept);
    }
  });

  it("a failure names its cause: the exit code, the agent's reason, or that it reported an error", () => {
    const cases = [
      [{ exitCode: 3 }, 'agent exited with code 3'],
      [{ directive: { action: 'error', reason: 'no tests found' } }, 'no tests found'],
      [{ directive: { action: 'error' } }, 'the agent reported an error'],
      // A non-zero exit wins over the agent's own words.
      [{ exitCode: 1, directive: { action: 'error', reason: 'x' } }, 'agent exited with code 1'],
    ] as const;
    for (const [extra, why] of cases) {
      const { h } = planned([spec('a')]);
      const { events, types } = h.ok(finished(h, 'a', extra));
      expect(types).not.toContain('taskCompleted');
      expect(event(events, 'taskFailed')).toMatchObject({ taskId: 'a', error: why, telemetry: T1 });
      expect(h.run.blocked?.reason).toBe(`step work failed: 1 of 1 task(s) failed: a (${why})`);
    }
  });

  it('keeps the branch, PR and commit a task hands on, and nothing else', () => {
    const { h } = planned([spec('a'), spec('b'), spec('c')], { maxWorkers: 3 });
    const result = { branch: 'feat/a', pr: 7, commit: 'abc123', extra: 'dropped' };
    const a = h.ok(finished(h, 'a', { directive: { action: 'continue', result } }));
    expect(event(a.events, 'taskCompleted')?.result).toEqual({
      branch: 'feat/a',
      pr: 7,
      commit: 'abc123',
    });
    const onlyCommit = { action: 'continue', result: { commit: 'def456' } };
    const b = h.ok(finished(h, 'b', { directive: onlyCommit }));
    expect(event(b.events, 'taskCompleted')?.result).toEqual({ commit: 'def456' });
    // Nothing worth keeping: no result at all, not an empty one.
    const c = h.ok(finished(h, 'c', { directive: { action: 'continue', result: { extra: 1 } } }));
    expect(event(c.events, 'taskCompleted')).not.toHaveProperty('result');
    expect(h.step('work').tasks!.find((t) => t.id === 'c')).not.toHaveProperty('result');
  });

  it('retries back off by doubling, then the task fails for good and failFast cancels the rest', () => {
    const { h } = planned([spec('a'), spec('b')], { retries: '{ count: 2, backoff: 1s }' });
    const fail = () =>
      h.ok({
        type: 'taskFailed',
        stepId: 'work',
        taskId: 'a',
        attempt: attemptOf(h, 'a'),
        error: 'flaky',
      });
    const first = fail();
    expect(event(first.events, 'taskFailed')?.retryInMs).toBe(1000);
    expect(enqueued(first.effects)).toMatchObject([{ taskId: 'a', attempt: 2, delayMs: 1000 }]);
    const second = fail();
    expect(event(second.events, 'taskFailed')?.retryInMs).toBe(2000);
    expect(enqueued(second.effects)).toMatchObject([{ taskId: 'a', attempt: 3, delayMs: 2000 }]);
    const last = fail();
    expect(event(last.events, 'taskFailed')).not.toHaveProperty('retryInMs');
    expect(event(last.events, 'taskCancelled')).toMatchObject({
      taskId: 'b',
      reason: 'task a failed (failFast)',
    });
    expect(event(last.events, 'stepFailed')).toMatchObject({
      error: '1 of 2 task(s) failed: a (flaky)',
      telemetry: { tokensIn: 0, tokensOut: 0, cachedTokens: 0, costUsd: 0 },
    });
  });

  it("says which failed task a skipped one waited for, and gives each job the step's timeout", () => {
    const { h, planned: first } = planned([spec('a'), spec('b', ['a'])], {
      policy: 'continue',
      timeout: '30s',
    });
    expect(enqueued(first.effects)).toMatchObject([{ taskId: 'a', timeoutMs: 30_000 }]);
    const failed = h.ok({
      type: 'taskFailed',
      stepId: 'work',
      taskId: 'a',
      attempt: 1,
      error: 'x',
    });
    expect(event(failed.events, 'taskSkipped')).toMatchObject({
      taskId: 'b',
      reason: 'a task it depends on failed: a',
    });
    const plain = planned([spec('a')]).planned;
    expect(enqueued(plain.effects)[0]).not.toHaveProperty('timeoutMs');
  });

  it('a step whose tasks all completed completes with no cost of its own and the run moves on', () => {
    const { h } = planned([spec('a')]);
    const done = h.ok(finished(h, 'a'));
    expect(event(done.events, 'stepCompleted')).toMatchObject({
      stepId: 'work',
      exitCode: 0,
      directive: { action: 'continue' },
      telemetry: { tokensIn: 0, tokensOut: 0, cachedTokens: 0, costUsd: 0 },
    });
    expect(h.current).toBe('ship');
  });

  it('a bad task list fails the step with the reason and no cost', () => {
    const h = new Harness();
    h.start(flow());
    h.finish();
    const d = h.ok({ type: 'tasksPlanned', stepId: 'work', attempt: 1, tasks: [spec('a', ['a'])] });
    const failedStep = event(d.events, 'stepFailed');
    expect(failedStep?.error).toMatch(/^bad task list: /);
    expect(failedStep?.telemetry).toEqual({
      tokensIn: 0,
      tokensOut: 0,
      cachedTokens: 0,
      costUsd: 0,
    });
    expect(event(d.events, 'runBlocked')).toMatchObject({
      kind: 'failure',
      reason: `step work failed: ${failedStep?.error}`,
    });
  });
});
