/**
 * The BullMQ driver closed while its Redis is gone (a bridge stopped during an outage): the close
 * ends instead of waiting for a Redis that does not come back. Before the fix it never ended
 * (BullMQ's QUIT and its wait for the blocking connection's 'end', src/jobs/queue/bullmq-reconnect.ts
 * and ioredis-disconnect.ts), so `serve` stopped during an outage hung until SIGKILL.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { createJobQueue } from '../../../src/jobs/queue/create-queue.ts';
import type { JobQueue } from '../../../src/jobs/queue/port.ts';
import { inCi, type RedisHandle, redisAvailable, startRedis } from '../../support/redis.ts';
import { holdsFor, waitUntil } from '../../support/slowdown.ts';
import { heldJob, startClose } from './fixtures/closing.ts';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A queue on a private Redis, with a worker running `processor` and an outcome listener. */
async function queueWithWorker(
  processor: () => Promise<Record<string, unknown>>,
): Promise<{ redis: RedisHandle; queue: JobQueue }> {
  const redis = await startRedis();
  cleanups.push(() => redis.stop());
  const queue = await createJobQueue({
    driver: 'bullmq',
    url: redis.url,
    prefix: `pbtest-${randomUUID().slice(0, 8)}`,
    onError: () => {}, // the outage's connection errors are expected here
  });
  queue.onOutcome(() => {});
  await queue.startWorker(processor, { concurrency: 1 });
  return { redis, queue };
}

/** Closes `queue`; resolves with 'closed', or fails naming what hung. */
async function closes(queue: JobQueue, what: string): Promise<string> {
  const close = startClose(queue);
  await waitUntil(close.ended, { timeoutMs: 20_000, message: `${what}: the close never ended` });
  return 'closed';
}

describe.skipIf(!redisAvailable().ok && !inCi())('bullmq: closed while Redis is gone', () => {
  it('an idle worker and the outcome stream: the close ends', async () => {
    const { redis, queue } = await queueWithWorker(async () => ({}));
    await redis.stop();
    expect(await closes(queue, 'idle')).toBe('closed');
  });

  it('a job running: the close waits for it to finish, then ends', async () => {
    const job = heldJob();
    const { redis, queue } = await queueWithWorker(job.processor);
    await queue.enqueue({ runId: 'r1', stepId: 'plan', attempt: 1, payload: {} });
    await waitUntil(job.started, { message: 'the job never started' });
    await redis.stop();

    const close = startClose(queue);
    // The worker's close is graceful: the running job first.
    await holdsFor(() => !close.ended(), 300, 'the close ended with the job still running');
    job.finish();
    await waitUntil(close.ended, { timeoutMs: 20_000, message: 'the close never ended' });
  });
});
