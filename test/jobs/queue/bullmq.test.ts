import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasCode } from '../../../src/errors.ts';
import { createJobQueue } from '../../../src/jobs/queue/create-queue.ts';
import {
  inCi,
  NO_REDIS_BANNER,
  type RedisHandle,
  redisAvailable,
  startRedis,
} from '../../support/redis.ts';
import { defineQueueContract } from './contract.ts';

const availability = redisAvailable();

if (availability.ok) {
  let redis: RedisHandle;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    await redis?.stop();
  });
  defineQueueContract('bullmq', async () => {
    const prefix = `pbtest-${randomUUID().slice(0, 8)}`;
    return {
      // lockDuration 1 s / stalledInterval 0.5 s: a killed worker's job is recovered in about 1.5 s.
      config: (overrides) => ({
        driver: 'bullmq',
        options: {
          url: redis.url,
          prefix,
          lockDurationMs: 1000,
          stalledIntervalMs: 500,
          runBusyRetryMs: 50,
          maxLostRetries: overrides?.maxLostRetries ?? 2,
        },
      }),
      leaseWaitMs: 1600,
      dispose: async () => {
        if (availability.via === 'REDIS_URL') await deleteKeys(redis.url, `${prefix}:*`);
      },
    };
  });
} else if (inCi()) {
  describe('job queue contract: bullmq', () => {
    it('needs Redis in CI', () => {
      throw new Error(
        `${availability.reason}. CI must run the BullMQ suite: apt-get install -y redis-server`,
      );
    });
  });
} else {
  console.warn(NO_REDIS_BANNER);
  // Declared but skipped, so the report counts every BullMQ case that did not run.
  describe.skip('no Redis: apt-get install -y redis-server', () => {
    defineQueueContract('bullmq', () => Promise.reject(new Error('no Redis')));
  });
}

describe('bullmq job queue without Redis', () => {
  it('fails fast with a ConfigError that names REDIS_URL and hides the password', async () => {
    const url = 'redis://user:s3cret@127.0.0.1:1';
    const error = await createJobQueue({ driver: 'bullmq', url }).catch((err: unknown) => err);
    expect(hasCode(error, 'CONFIG')).toBe(true);
    const message = (error as Error).message;
    expect(message).toContain('REDIS_URL');
    expect(message).toContain('127.0.0.1:1');
    expect(message).not.toContain('s3cret');
  });
});

/** Removes a test's keys from a shared Redis (REDIS_URL). */
async function deleteKeys(url: string, pattern: string): Promise<void> {
  const client = new Redis(url);
  try {
    let cursor = '0';
    do {
      const [next, keys] = await client.scan(cursor, 'MATCH', pattern, 'COUNT', 500);
      if (keys.length > 0) await client.del(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    client.disconnect();
  }
}
