/**
 * The BullMQ driver when its network to Redis drops every packet (issue 33): no error ever comes
 * from the socket, so only the command timeout ends an enqueue. It fails, naming the timeout,
 * instead of hanging (a leader that hung so held the run's mutex and the update in hand). A close
 * into that silence (a bridge stopped then) waits for its running jobs, then for Redis at most
 * its bound, then cuts the connections and ends (src/jobs/queue/bullmq-close.ts); before, it
 * never ended and `serve` waited for SIGKILL.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { createJobQueue } from '../../../src/jobs/queue/create-queue.ts';
import type { JobQueue } from '../../../src/jobs/queue/port.ts';
import { TcpProxy } from '../../fakes/tcp-proxy.ts';
import { inCi, redisAvailable, startRedis } from '../../support/redis.ts';
import { holdsFor, waitUntil } from '../../support/slowdown.ts';
import { heldJob, startClose } from './fixtures/closing.ts';

const availability = redisAvailable();
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe.skipIf(!availability.ok && !inCi())('bullmq: Redis black-holed', () => {
  it('an enqueue fails after the command timeout instead of hanging', async () => {
    const redis = await startRedis();
    cleanups.push(() => redis.stop());
    const { proxy, url } = await TcpProxy.inFront(redis.url);
    const queue: JobQueue = await createJobQueue({
      driver: 'bullmq',
      url,
      prefix: `pbtest-${randomUUID().slice(0, 8)}`,
      commandTimeoutMs: 300,
    });
    // Closed after the proxy resets every socket: a close into the black hole would wait too.
    cleanups.push(() => queue.close());
    cleanups.push(() => proxy.close());
    const job = { runId: 'r1', stepId: 'plan', attempt: 1, payload: {} };
    expect((await queue.enqueue(job)).created).toBe(true);

    proxy.cut('blackhole');
    let settled: { error?: unknown } | undefined;
    queue.enqueue({ ...job, attempt: 2 }).then(
      () => {
        settled = {};
      },
      (error: unknown) => {
        settled = { error };
      },
    );
    await waitUntil(() => settled, {
      timeoutMs: 5_000,
      message: 'the enqueue into the black hole never settled',
    });
    expect(String(settled!.error)).toMatch(/timed out/i);
  });

  it('a close with an idle worker and the outcome stream ends once its bound runs out, saying why', async () => {
    const errors: string[] = [];
    const { proxy, queue } = await proxiedQueueWithWorker(async () => ({}), errors);
    proxy.cut('blackhole');
    const close = startClose(queue);
    await waitUntil(close.ended, { timeoutMs: 20_000, message: 'the close never ended' });
    const said = errors.filter((e) => /did not answer for 0\.5 s/.test(e));
    expect(said).toHaveLength(1);
    expect(said[0]).toMatch(/connections were cut/);
  });

  it('a job running: the close waits for it past the bound, then ends', async () => {
    const errors: string[] = [];
    const cut = () => errors.some((e) => /did not answer/.test(e));
    const job = heldJob();
    const { proxy, queue } = await proxiedQueueWithWorker(job.processor, errors);
    await queue.enqueue({ runId: 'r1', stepId: 'plan', attempt: 1, payload: {} });
    await waitUntil(job.started, { message: 'the job never started' });
    proxy.cut('blackhole');
    const close = startClose(queue);
    // The bound (0.5 s) starts when the job ends, however long it runs: nothing is cut before.
    await holdsFor(() => !close.ended() && !cut(), 1_500, 'the close cut a running job short');
    job.finish();
    await waitUntil(close.ended, { timeoutMs: 20_000, message: 'the close never ended' });
    expect(cut()).toBe(true);
  });
});

/** A queue reaching a private Redis through a proxy, with a worker and an outcome listener. */
async function proxiedQueueWithWorker(
  processor: () => Promise<Record<string, unknown>>,
  errors: string[],
): Promise<{ proxy: TcpProxy; queue: JobQueue }> {
  const redis = await startRedis();
  cleanups.push(() => redis.stop());
  const { proxy, url } = await TcpProxy.inFront(redis.url);
  cleanups.push(() => proxy.close());
  const queue = await createJobQueue({
    driver: 'bullmq',
    url,
    prefix: `pbtest-${randomUUID().slice(0, 8)}`,
    closeSilenceMs: 500,
    onError: (err) => errors.push(String(err)),
  });
  queue.onOutcome(() => {});
  await queue.startWorker(processor, { concurrency: 1 });
  return { proxy, queue };
}
