/**
 * The BullMQ driver when its network to Redis drops every packet (issue 33): no error ever comes
 * from the socket, so only the command timeout ends an enqueue. It fails, naming the timeout,
 * instead of hanging (a leader that hung so held the run's mutex and the update in hand).
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { createJobQueue } from '../../../src/jobs/queue/create-queue.ts';
import type { JobQueue } from '../../../src/jobs/queue/port.ts';
import { TcpProxy } from '../../fakes/tcp-proxy.ts';
import { inCi, redisAvailable, startRedis } from '../../support/redis.ts';
import { waitUntil } from '../../support/slowdown.ts';

const availability = redisAvailable();
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe.skipIf(!availability.ok && !inCi())('bullmq: Redis black-holed', () => {
  it('an enqueue fails after the command timeout instead of hanging', async () => {
    const redis = await startRedis();
    cleanups.push(() => redis.stop());
    const target = new URL(redis.url);
    const proxy = await TcpProxy.start({ host: target.hostname, port: Number(target.port) });
    const proxied = new URL(redis.url);
    proxied.hostname = '127.0.0.1';
    proxied.port = String(proxy.port);
    const queue: JobQueue = await createJobQueue({
      driver: 'bullmq',
      url: proxied.toString(),
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
});
