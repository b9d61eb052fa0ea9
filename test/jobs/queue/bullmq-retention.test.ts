/**
 * BullMQ's retention against a real redis-server: Redis keeps only the newest finished jobs
 * (`removeOnComplete` / `removeOnFail` counts), so it does not grow without bound; the age comes
 * from PHASEBRIDGE_RETAIN_JOBS and the counts from PHASEBRIDGE_BULLMQ_KEEP_COMPLETED / _FAILED.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bullmqRetention } from '../../../src/app/retention.ts';
import { loadConfig } from '../../../src/config.ts';
import { keepJobsOf } from '../../../src/jobs/queue/bullmq-retention.ts';
import { createJobQueue } from '../../../src/jobs/queue/create-queue.ts';
import type { JobOutcome, JobQueue } from '../../../src/jobs/queue/port.ts';
import { type RedisHandle, redisAvailable, startRedis } from '../../support/redis.ts';
import { slow } from '../../support/slowdown.ts';

const availability = redisAvailable();

describe('BullMQ retention settings', () => {
  it('takes the age from PHASEBRIDGE_RETAIN_JOBS and the counts from their env', () => {
    const config = loadConfig({
      env: {
        PHASEBRIDGE_HOME: '/tmp/pb-unused',
        PHASEBRIDGE_RETAIN_JOBS: '2d',
        PHASEBRIDGE_BULLMQ_KEEP_COMPLETED: '10',
      },
      cwd: '/',
    });
    const retention = bullmqRetention(config);
    expect(retention).toEqual({ ageMs: 2 * 86_400_000, completed: 10, failed: 5000 });
    expect(keepJobsOf(retention)).toEqual({
      removeOnComplete: { age: 172_800, count: 10 },
      removeOnFail: { age: 172_800, count: 5000 },
    });
  });

  it('refuses a count that is not a whole number, naming the env', () => {
    expect(() =>
      loadConfig({
        env: { PHASEBRIDGE_HOME: '/tmp/pb-unused', PHASEBRIDGE_BULLMQ_KEEP_FAILED: 'lots' },
        cwd: '/',
      }),
    ).toThrow(/PHASEBRIDGE_BULLMQ_KEEP_FAILED/);
  });
});

describe.skipIf(!availability.ok)('BullMQ retention in Redis', () => {
  let redis: RedisHandle;
  let queue: JobQueue;
  beforeAll(async () => {
    redis = await startRedis();
    queue = await createJobQueue({
      driver: 'bullmq',
      url: redis.url,
      prefix: `pbtest-${randomUUID().slice(0, 8)}`,
      retention: { completed: 2, failed: 1 },
    });
  });
  afterAll(async () => {
    await queue?.close();
    await redis?.stop();
  });

  it('keeps only the newest completed and failed jobs', async () => {
    const outcomes = new Map<string, JobOutcome>();
    queue.onOutcome((id, _job, outcome) => outcomes.set(id, outcome));
    await queue.startWorker(
      async (job) => {
        if (job.payload.fail === true) throw new Error('failing on purpose');
        return { done: true };
      },
      { concurrency: 1 },
    );
    const ids: string[] = [];
    // One at a time, so "newest" is the order they finished in.
    for (const [i, fail] of [false, false, false, false, true, true].entries()) {
      const job = { runId: `run-${i}`, stepId: 'build', attempt: 1, payload: { fail } };
      const { id } = await queue.enqueue(job);
      ids.push(id);
      const deadline = Date.now() + slow(20_000);
      while (!outcomes.has(id)) {
        if (Date.now() > deadline) throw new Error(`job ${id} did not finish`);
        await new Promise((r) => setTimeout(r, 20));
      }
    }
    const states = await Promise.all(ids.map(async (id) => (await queue.get(id))?.state ?? null));
    expect(states).toEqual([null, null, 'completed', 'completed', null, 'failed']);
  });
});
