/**
 * The outbox's write order on a store that answers later (Postgres): writes run one after
 * another in the order asked, a write asked behind a slow one waits for it (a row's `attempted`
 * never lands after its `confirmed`), a failed write does not stop the next, and a store that
 * answers at once (SQLite) is called at once, with no promise in between.
 */
import { describe, expect, it } from 'vitest';
import { WriteChain } from '../../../src/bridges/outbox/store-port.ts';

/** A write that finishes when the test says so, recording when it started and ended. */
function slowWrite(log: string[], name: string) {
  let finish!: () => void;
  let fail!: (err: Error) => void;
  const op = () => {
    log.push(`start ${name}`);
    return new Promise<void>((resolve, reject) => {
      finish = () => {
        log.push(`end ${name}`);
        resolve();
      };
      fail = reject;
    });
  };
  return { op, finish: () => finish(), fail: (err: Error) => fail(err) };
}

describe('WriteChain', () => {
  it('calls a synchronous store at once and hands back its answer as is', () => {
    const chain = new WriteChain();
    const log: string[] = [];
    const answer = chain.run(() => {
      log.push('sync');
      return 7;
    });
    expect(answer).toBe(7);
    expect(log).toEqual(['sync']);
  });

  it('runs writes in the order asked, each after the one before has ended', async () => {
    const chain = new WriteChain();
    const log: string[] = [];
    const attempted = slowWrite(log, 'attempted');
    const first = chain.run(attempted.op);
    const second = chain.run(() => {
      log.push('confirmed');
    });
    await Promise.resolve();
    expect(log).toEqual(['start attempted']);
    attempted.finish();
    await first;
    await second;
    expect(log).toEqual(['start attempted', 'end attempted', 'confirmed']);
    await chain.settled();
    // Nothing pending any more: the next write is called at once again.
    const now = chain.run(() => 'at once');
    expect(now).toBe('at once');
  });

  it('goes on after a failed write, which its caller sees', async () => {
    const chain = new WriteChain();
    const log: string[] = [];
    const broken = slowWrite(log, 'broken');
    const failed = chain.run(broken.op);
    const next = chain.run(() => {
      log.push('next');
    });
    broken.fail(new Error('connection reset'));
    await expect(failed).rejects.toThrow('connection reset');
    await next;
    expect(log).toEqual(['start broken', 'next']);
  });
});
