/**
 * The task scheduler's own answers: what is wrong with a task list (said in words a person can
 * fix), which tasks start now (dependencies done, priority then list order, never past
 * maxWorkers) and which can never run because something they wait for failed or was skipped.
 */
import { describe, expect, it } from 'vitest';
import {
  readyTasks,
  taskGraphProblem,
  unrunnableTasks,
} from '../../../src/engine/tasks/schedule.ts';
import { newTask, type TaskSpec, type TaskState } from '../../../src/engine/tasks/types.ts';

const spec = (id: string, dependsOn: string[] = [], priority = 0): TaskSpec => ({
  id,
  title: id,
  priority,
  dependsOn,
});

const task = (id: string, status: TaskState['status'], dependsOn: string[] = [], priority = 0) => ({
  ...newTask(spec(id, dependsOn, priority)),
  status,
});

const ids = (tasks: TaskState[]) => tasks.map((t) => t.id);

describe('a task list that cannot run says why', () => {
  it('empty, a repeated id, a task depending on itself or on an unknown task', () => {
    expect(taskGraphProblem([])).toBe('the task list is empty');
    expect(taskGraphProblem([spec('a'), spec('b'), spec('a')])).toBe('task id "a" appears twice');
    expect(taskGraphProblem([spec('a'), spec('b', ['b'])])).toBe('task "b" depends on itself');
    expect(taskGraphProblem([spec('a', ['x'])])).toBe('task "a" depends on unknown task "x"');
  });

  it('names the cycle as a path, even when it starts below a sound task', () => {
    expect(taskGraphProblem([spec('a', ['b']), spec('b', ['a'])])).toBe(
      'tasks depend on each other in a cycle: a → b → a',
    );
    // root depends on x; x → y → z → x is the cycle, root is not part of it.
    const list = [spec('root', ['x']), spec('x', ['y']), spec('y', ['z']), spec('z', ['x'])];
    expect(taskGraphProblem(list)).toBe('tasks depend on each other in a cycle: x → y → z → x');
    // A sound branch walked before the cycle is not part of the path.
    const branch = [spec('root', ['x']), spec('x', ['p', 'y']), spec('p'), spec('y', ['x'])];
    expect(taskGraphProblem(branch)).toBe('tasks depend on each other in a cycle: x → y → x');
  });

  it('a diamond (two paths to one task) is sound, whatever the list order', () => {
    const diamond = [spec('d', ['b', 'c']), spec('b', ['a']), spec('c', ['a']), spec('a')];
    expect(taskGraphProblem(diamond)).toBeNull();
    expect(taskGraphProblem([...diamond].reverse())).toBeNull();
    expect(taskGraphProblem([spec('only')])).toBeNull();
  });
});

describe('which tasks start now', () => {
  it('highest priority first, then list order, up to the free slots', () => {
    const tasks = [
      task('a', 'pending', [], 1),
      task('b', 'pending', [], 5),
      task('c', 'pending', [], 1),
    ];
    expect(ids(readyTasks(tasks, 3))).toEqual(['b', 'a', 'c']);
    expect(ids(readyTasks(tasks, 2))).toEqual(['b', 'a']);
    // Same priority: the list's order, not the id's.
    const same = [task('z', 'pending'), task('m', 'pending'), task('a', 'pending')];
    expect(ids(readyTasks(same, 3))).toEqual(['z', 'm', 'a']);
  });

  it('tasks in flight take slots; none start when every slot is taken or over-full', () => {
    const tasks = [task('a', 'running'), task('b', 'queued'), task('c', 'pending')];
    expect(readyTasks(tasks, 2)).toEqual([]);
    expect(readyTasks(tasks, 1)).toEqual([]);
    // Over-full (maxWorkers lowered while tasks run): still none, however many are pending.
    expect(readyTasks([...tasks, task('d', 'pending'), task('e', 'pending')], 1)).toEqual([]);
    expect(ids(readyTasks(tasks, 3))).toEqual(['c']);
  });

  it('a task waits until every dependency completed; a failed one never counts', () => {
    const tasks = [
      task('a', 'completed'),
      task('b', 'running'),
      task('c', 'pending', ['a']),
      task('d', 'pending', ['a', 'b']),
      task('e', 'failed'),
      task('f', 'pending', ['e']),
    ];
    expect(ids(readyTasks(tasks, 9))).toEqual(['c']);
  });
});

describe('which tasks can never run', () => {
  it('pending tasks waiting on a failed or skipped one, in list order', () => {
    const tasks = [
      task('a', 'failed'),
      task('b', 'skipped'),
      task('c', 'pending', ['b']),
      task('d', 'pending', ['x', 'a']),
      task('e', 'pending', ['c']),
      task('f', 'completed', ['a']),
      task('g', 'pending'),
    ];
    // e waits on c, which only becomes skipped in the next round (the caller repeats).
    expect(ids(unrunnableTasks(tasks))).toEqual(['c', 'd']);
    expect(unrunnableTasks([task('a', 'completed'), task('b', 'pending', ['a'])])).toEqual([]);
  });
});
