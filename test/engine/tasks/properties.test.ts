/**
 * Property tests of the `tasks` step over random task graphs and random worker behaviour
 * (finish, fail, lose the job in a crash, pause/resume, human retry): no task has two live jobs
 * at once, never more than maxWorkers tasks are in flight, a task is queued only once its
 * dependencies completed, a completed task is never queued again (a crash re-runs only unfinished
 * tasks), and the step completes exactly when every task completed.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { replay } from '../../../src/engine/evolve.ts';
import type { TaskSpec } from '../../../src/engine/tasks/types.ts';
import { Harness, T1, wf } from '../harness.ts';

/** A random DAG: each task may depend on earlier ones. */
const graph = fc
  .integer({ min: 1, max: 7 })
  .chain((n) =>
    fc.tuple(
      ...Array.from({ length: n }, (_, i) =>
        fc.record({
          priority: fc.integer({ min: -2, max: 2 }),
          deps: fc.subarray(
            Array.from({ length: i }, (_, j) => j),
            { maxLength: Math.min(2, i) },
          ),
        }),
      ),
    ),
  )
  .map((rows): TaskSpec[] =>
    rows.map((r, i) => ({
      id: `t${i}`,
      title: `task ${i}`,
      priority: r.priority,
      dependsOn: r.deps.map((j) => `t${j}`),
    })),
  );

const moveKind = fc.constantFrom(
  'start',
  'finish',
  'finish',
  'finish',
  'fail',
  'crash',
  'pause',
  'retry',
);
const moves = fc.array(fc.tuple(moveKind, fc.nat()), { minLength: 1, maxLength: 80 });

describe('tasks step properties', () => {
  it('keeps its scheduling invariants whatever workers report', () => {
    fc.assert(
      fc.property(
        graph,
        fc.integer({ min: 1, max: 3 }),
        fc.constantFrom('failFast', 'continue'),
        fc.integer({ min: 0, max: 1 }),
        moves,
        (tasks, maxWorkers, policy, retries, script) => {
          const h = new Harness();
          h.start(
            wf(`
id: prop
steps:
  - { id: plan, agent: a, prompt: p }
  - id: work
    agent: a
    prompt: p
    tasks: { file: t.json, maxWorkers: ${maxWorkers}, policy: ${policy} }
    ${retries > 0 ? 'retries: { count: 1, backoff: 1s }' : ''}
  - { id: ship, agent: a, prompt: p }
`),
          );
          h.finish();
          /** Live jobs per task: enqueued and neither finished, cancelled nor lost. */
          const live = new Map<string, Set<number>>();
          const completedOnce = new Set<string>();
          const apply = (r: ReturnType<Harness['ok']>) => {
            for (const e of r.effects) {
              if (e.type === 'enqueueTask') {
                const set = live.get(e.taskId) ?? new Set();
                set.add(e.attempt);
                live.set(e.taskId, set);
                expect(set.size).toBe(1); // never two live jobs of one task
              }
              if (e.type === 'cancelTask') live.get(e.taskId)?.delete(e.attempt);
            }
            for (const e of r.events) {
              if (e.type === 'taskQueued') {
                expect(completedOnce.has(e.taskId)).toBe(false);
                const step = h.step('work');
                const spec = step.tasks!.find((t) => t.id === e.taskId)!;
                for (const d of spec.dependsOn) {
                  expect(step.tasks!.find((t) => t.id === d)!.status).toBe('completed');
                }
              }
              if (e.type === 'taskCompleted') completedOnce.add(e.taskId);
            }
            const work = h.step('work');
            const inFlight = (work.tasks ?? []).filter(
              (t) => t.status === 'queued' || t.status === 'running',
            );
            expect(inFlight.length).toBeLessThanOrEqual(maxWorkers);
            if (work.status === 'completed') {
              expect(work.tasks!.every((t) => t.status === 'completed')).toBe(true);
            }
          };
          apply(h.ok({ type: 'tasksPlanned', stepId: 'work', attempt: 1, tasks }));
          for (const [kind, n] of script) {
            if (h.run.status === 'completed' || h.current !== 'work') break;
            const work = h.step('work');
            const flying = (work.tasks ?? []).filter(
              (t) => t.status === 'queued' || t.status === 'running',
            );
            const pick = flying[n % Math.max(1, flying.length)];
            const base = pick && { stepId: 'work', taskId: pick.id, attempt: pick.attempt };
            const done = (taskId: string, attempt: number) => live.get(taskId)?.delete(attempt);
            if (kind === 'start' && pick?.status === 'queued') {
              apply(h.ok({ type: 'taskStarted', ...base! }));
            } else if (kind === 'finish' && pick) {
              done(pick.id, pick.attempt);
              const d = { action: 'continue' as const };
              apply(
                h.ok({ type: 'taskFinished', ...base!, exitCode: 0, directive: d, telemetry: T1 }),
              );
            } else if (kind === 'fail' && pick) {
              done(pick.id, pick.attempt);
              apply(h.ok({ type: 'taskFailed', ...base!, error: 'boom' }));
            } else if (kind === 'crash' && pick) {
              // The bridge died; at start-up this task's job was gone (others survived).
              done(pick.id, pick.attempt);
              apply(h.ok({ type: 'taskFailed', ...base!, error: 'lost', interrupted: true }));
            } else if (kind === 'pause' && h.run.status === 'active') {
              apply(h.ok({ type: 'pause' }));
              apply(h.ok({ type: 'resume' }));
            } else if (kind === 'retry' && h.run.status === 'blocked') {
              apply(h.ok({ type: 'retry' }));
            }
          }
          expect(replay(h.log)).toEqual(h.state);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('a run whose workers always succeed completes every task exactly once', () => {
    fc.assert(
      fc.property(graph, fc.integer({ min: 1, max: 4 }), (tasks, maxWorkers) => {
        const h = new Harness();
        h.start(
          wf(`
id: ok
steps:
  - { id: plan, agent: a, prompt: p }
  - { id: work, agent: a, prompt: p, tasks: { file: t.json, maxWorkers: ${maxWorkers} } }
`),
        );
        h.finish();
        h.ok({ type: 'tasksPlanned', stepId: 'work', attempt: 1, tasks });
        let guard = 0;
        while (h.run.status === 'active' && guard++ < 100) {
          const t = h.step('work').tasks!.find((x) => x.status === 'queued')!;
          const d = { action: 'continue' as const };
          h.ok({
            type: 'taskFinished',
            stepId: 'work',
            taskId: t.id,
            attempt: t.attempt,
            exitCode: 0,
            directive: d,
            telemetry: T1,
          });
        }
        expect(h.run.status).toBe('completed');
        expect(h.step('work').tasks!.every((t) => t.attempt === 1)).toBe(true);
      }),
      { numRuns: 200 },
    );
  });
});
