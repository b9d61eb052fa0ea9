/**
 * Pure scheduling of a `tasks` step: is a task list sound (unique ids, known dependencies, no
 * cycle), which pending tasks may start now (dependencies completed, highest priority first,
 * never more than `maxWorkers` in flight), and which can never run (a dependency failed).
 */
import { type TaskSpec, type TaskState, taskInFlight } from './types.ts';

/** What is wrong with a task list's graph, or null when it is sound. */
export function taskGraphProblem(specs: readonly TaskSpec[]): string | null {
  if (specs.length === 0) return 'the task list is empty';
  const ids = new Set<string>();
  for (const t of specs) {
    if (ids.has(t.id)) return `task id "${t.id}" appears twice`;
    ids.add(t.id);
  }
  for (const t of specs) {
    for (const d of t.dependsOn) {
      if (d === t.id) return `task "${t.id}" depends on itself`;
      if (!ids.has(d)) return `task "${t.id}" depends on unknown task "${d}"`;
    }
  }
  const cycle = findCycle(specs);
  return cycle === null ? null : `tasks depend on each other in a cycle: ${cycle.join(' → ')}`;
}

/** A dependency cycle as a path of ids (first repeated at the end), or null. */
function findCycle(specs: readonly TaskSpec[]): string[] | null {
  const deps = new Map(specs.map((t) => [t.id, t.dependsOn]));
  const state = new Map<string, 'visiting' | 'done'>();
  const stack: string[] = [];
  const visit = (id: string): string[] | null => {
    const s = state.get(id);
    if (s === 'done') return null;
    if (s === 'visiting') return [...stack.slice(stack.indexOf(id)), id];
    state.set(id, 'visiting');
    stack.push(id);
    for (const d of deps.get(id) ?? []) {
      const found = visit(d);
      if (found) return found;
    }
    stack.pop();
    state.set(id, 'done');
    return null;
  };
  for (const t of specs) {
    const found = visit(t.id);
    if (found) return found;
  }
  return null;
}

/**
 * The pending tasks to start now: every dependency completed, by priority (highest first, then
 * list order), as many as keep the tasks in flight at or below `maxWorkers`.
 */
export function readyTasks(tasks: readonly TaskState[], maxWorkers: number): TaskState[] {
  const free = maxWorkers - tasks.filter(taskInFlight).length;
  if (free <= 0) return [];
  const completed = new Set(tasks.filter((t) => t.status === 'completed').map((t) => t.id));
  const order = new Map(tasks.map((t, i) => [t.id, i]));
  return tasks
    .filter((t) => t.status === 'pending' && t.dependsOn.every((d) => completed.has(d)))
    .sort((a, b) => b.priority - a.priority || order.get(a.id)! - order.get(b.id)!)
    .slice(0, free);
}

/**
 * Pending tasks that can never run because a task they depend on (directly or not) failed or was
 * skipped, in list order; their skip may make others unrunnable, so the caller repeats.
 */
export function unrunnableTasks(tasks: readonly TaskState[]): TaskState[] {
  const dead = new Set(
    tasks.filter((t) => t.status === 'failed' || t.status === 'skipped').map((t) => t.id),
  );
  return tasks.filter((t) => t.status === 'pending' && t.dependsOn.some((d) => dead.has(d)));
}
