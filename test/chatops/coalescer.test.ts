import { describe, expect, it } from 'vitest';
import { Coalescer, type Timers } from '../../src/chatops/coalescer.ts';

/** A fake clock: timers fire only when the test advances time. */
class FakeTimers implements Timers {
  t = 0;
  readonly #timers = new Map<number, { at: number; fn: () => void }>();
  #next = 1;
  now = () => this.t;
  setTimeout = (fn: () => void, ms: number) => {
    const id = this.#next++;
    this.#timers.set(id, { at: this.t + ms, fn });
    return id;
  };
  clearTimeout = (h: unknown) => {
    this.#timers.delete(h as number);
  };
  /** Moves time forward, firing due timers in order, letting promises settle in between. */
  async advance(ms: number): Promise<void> {
    const until = this.t + ms;
    for (;;) {
      await flush();
      const due = [...this.#timers.entries()]
        .filter(([, t]) => t.at <= until)
        .sort((a, b) => a[1].at - b[1].at)[0];
      if (!due) break;
      this.#timers.delete(due[0]);
      this.t = due[1].at;
      due[1].fn();
    }
    this.t = until;
    await flush();
  }
}

const flush = async () => {
  for (let i = 0; i < 10; i++) await Promise.resolve();
};

function setup(interval = 1000) {
  const timers = new FakeTimers();
  const runs: { key: string; value: number; at: number }[] = [];
  const errors: unknown[] = [];
  const c = new Coalescer(interval, (e) => errors.push(e), timers);
  const push = (key: string, value: number) =>
    c.push(key, async () => {
      runs.push({ key, value, at: timers.t });
    });
  return { timers, runs, errors, c, push };
}

describe('Coalescer', () => {
  it('runs the first task at once, then the latest one at most once per interval', async () => {
    const { timers, runs, push } = setup();
    push('a', 1);
    await timers.advance(0);
    for (let v = 2; v <= 10; v++) {
      push('a', v);
      await timers.advance(100);
    }
    await timers.advance(2000);
    expect(runs).toEqual([
      { key: 'a', value: 1, at: 0 },
      { key: 'a', value: 10, at: 1000 },
    ]);
  });

  it('a task pushed with `now` starts without waiting for the interval, never overlapping', async () => {
    const { timers, runs, c } = setup();
    const push = (value: number, now: boolean) =>
      c.push(
        'a',
        async () => {
          runs.push({ key: 'a', value, at: timers.t });
          await new Promise<void>((r) => timers.setTimeout(r, 50));
        },
        now,
      );
    push(1, false);
    await timers.advance(10);
    push(2, false); // waits for the interval
    await timers.advance(100);
    push(3, true); // a final state: at once, replacing 2
    await timers.advance(0);
    push(4, true); // 3 is still running: 4 starts when it ends
    await timers.advance(2000);
    expect(runs.map((r) => `${r.value}@${r.at}`)).toEqual(['1@0', '3@110', '4@160']);
  });

  it('keeps keys independent', async () => {
    const { timers, runs, push } = setup();
    push('a', 1);
    push('b', 1);
    push('a', 2);
    await timers.advance(1000);
    expect(runs.map((r) => `${r.key}${r.value}@${r.at}`)).toEqual(['a1@0', 'b1@0', 'a2@1000']);
  });

  it('never overlaps two tasks of a key, and a failing task does not stop the key', async () => {
    const timers = new FakeTimers();
    const errors: unknown[] = [];
    const c = new Coalescer(0, (e) => errors.push(e), timers);
    let release!: () => void;
    const log: string[] = [];
    c.push('a', async () => {
      log.push('start1');
      await new Promise<void>((r) => {
        release = r;
      });
      log.push('end1');
      throw new Error('edit failed');
    });
    await flush();
    c.push('a', async () => {
      log.push('start2');
    });
    await flush();
    expect(log).toEqual(['start1']);
    release();
    await c.settled('a');
    expect(log).toEqual(['start1', 'end1', 'start2']);
    expect(errors).toHaveLength(1);
  });

  it('settles after the pending task ran, and flushAll ignores the interval', async () => {
    const { timers, runs, c, push } = setup();
    push('a', 1);
    await timers.advance(0);
    push('a', 2);
    let settled = false;
    void c.settled('a').then(() => {
      settled = true;
    });
    await timers.advance(500);
    expect(settled).toBe(false);
    await timers.advance(500);
    expect(settled).toBe(true);
    push('a', 3);
    await c.flushAll();
    expect(runs.map((r) => r.value)).toEqual([1, 2, 3]);
    expect(runs[2]!.at).toBe(1000);
  });
});

describe('Coalescer.forget', () => {
  it('drops the pending task of a forgotten key', async () => {
    const { timers, runs, c, push } = setup();
    push('a', 1);
    await timers.advance(0);
    push('a', 2);
    c.forget('a');
    await timers.advance(5000);
    await c.settled('a');
    expect(runs.map((r) => r.value)).toEqual([1]);
  });
});
