import { describe, expect, it } from 'vitest';
import { KeyedMutex } from '../../../src/engine/ledger/keyed-mutex.ts';

const tick = () => new Promise((r) => setImmediate(r));

describe('KeyedMutex', () => {
  it('runs tasks of one key one at a time, in order, even when one fails', async () => {
    const m = new KeyedMutex();
    const log: string[] = [];
    const task =
      (name: string, fail = false) =>
      async () => {
        log.push(`${name}:start`);
        await tick();
        log.push(`${name}:end`);
        if (fail) throw new Error(name);
        return name;
      };
    const results = await Promise.allSettled([
      m.run('run', task('a')),
      m.run('run', task('b', true)),
      m.run('run', task('c')),
    ]);
    expect(log).toEqual(['a:start', 'a:end', 'b:start', 'b:end', 'c:start', 'c:end']);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
  });

  it('lets different keys overlap, and drain waits for all', async () => {
    const m = new KeyedMutex();
    const log: string[] = [];
    const task = (name: string) => async () => {
      log.push(`${name}:start`);
      await tick();
      log.push(`${name}:end`);
    };
    void m.run('x', task('x'));
    void m.run('y', task('y'));
    await m.drain();
    expect(log.slice(0, 2).sort()).toEqual(['x:start', 'y:start']);
    expect(log).toHaveLength(4);
  });
});
