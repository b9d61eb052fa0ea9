/**
 * The bound on a close whose Redis went silent (src/jobs/queue/bullmq-close.ts): a close that
 * ends is never cut, its error is its caller's, the bound waits for the running jobs, and a
 * queue that found Redis silent once cuts its next close at once, saying so only once.
 */
import { describe, expect, it } from 'vitest';
import { closeWithin, RedisSilence, RunningJobs } from '../../../src/jobs/queue/bullmq-close.ts';
import { holdsFor, waitUntil } from '../../support/slowdown.ts';

/** A close that ends only when `end` is called (or when cut, if `endsWhenCut`). */
function pendingClose(endsWhenCut: boolean) {
  let end: () => void = () => {};
  const graceful = new Promise<void>((resolve) => {
    end = resolve;
  });
  const cuts: number[] = [];
  const said: number[] = [];
  return {
    graceful,
    end: () => end(),
    cut: () => {
      cuts.push(Date.now());
      if (endsWhenCut) end();
    },
    onCut: (ms: number) => said.push(ms),
    cuts,
    said,
  };
}

describe('closeWithin', () => {
  it('a close that ends is not cut', async () => {
    const c = pendingClose(false);
    const result = closeWithin({ ...c, idle: () => Promise.resolve(), silenceMs: 10_000 });
    c.end();
    expect(await result).toBe('closed');
    expect(c.cuts).toEqual([]);
  });

  it('the close failing before the bound fails the caller, nothing cut', async () => {
    const failing = Promise.reject(new Error('QUIT timed out'));
    await expect(
      closeWithin({ graceful: failing, idle: () => Promise.resolve(), cut: () => {} }),
    ).rejects.toThrow('QUIT timed out');
  });

  it('a silent close is cut once the bound runs out after the last job, and says so', async () => {
    const c = pendingClose(true);
    const jobs = new RunningJobs();
    jobs.start();
    let result: string | undefined;
    closeWithin({ ...c, idle: () => jobs.idle(), silenceMs: 50 }).then((r) => {
      result = r;
    });
    await holdsFor(() => c.cuts.length === 0, 300, 'cut while a job was running');
    jobs.end();
    await waitUntil(() => result, { message: 'the close never ended' });
    expect(result).toBe('cut');
    expect(c.cuts).toHaveLength(1);
    expect(c.said).toEqual([50]);
  });

  it('once a queue found Redis silent, its next close is cut at once without a second report', async () => {
    const silence = new RedisSilence();
    const first = pendingClose(true);
    expect(
      await closeWithin({ ...first, idle: () => Promise.resolve(), silenceMs: 20, silence }),
    ).toBe('cut');
    expect(silence.found).toBe(true);
    const second = pendingClose(true);
    const started = Date.now();
    expect(
      await closeWithin({ ...second, idle: () => Promise.resolve(), silenceMs: 60_000, silence }),
    ).toBe('cut');
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(first.said).toEqual([20]);
    expect(second.said).toEqual([]);
  });
});
