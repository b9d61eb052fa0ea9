/**
 * `serve` on BullMQ stopped while its Redis is gone (an operator's SIGTERM during an outage): it
 * stops, says so and exits 0, instead of waiting for a Redis that does not come back until the
 * service manager's SIGKILL (the BullMQ driver's close never ended: bullmq-reconnect.ts).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type ServeProcess, spawnServe } from '../support/ha-serve.ts';
import { inCi, redisAvailable, startRedis } from '../support/redis.ts';
import { waitUntil } from '../support/slowdown.ts';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe.skipIf(!redisAvailable().ok && !inCi())('serve: stopped while Redis is gone', () => {
  it('SIGTERM during a Redis outage: the bridge stops and exits 0', async () => {
    const redis = await startRedis();
    cleanups.push(() => redis.stop());
    if (!redis.restart) return; // REDIS_URL's Redis is not ours to stop
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-redis-gone-'));
    cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
    const serve: ServeProcess = await spawnServe({
      name: 'a',
      dir,
      env: {
        PHASEBRIDGE_WORKSPACE: path.join(dir, 'ws'),
        LOG_LEVEL: 'info',
        REDIS_URL: redis.url,
      },
    });
    cleanups.push(() => {
      // A hung bridge must not outlive the story.
      if (serve.child.exitCode === null) serve.child.kill('SIGKILL');
    });
    await waitUntil(() => serve.output().includes('phasebridge is running'), {
      timeoutMs: 60_000,
      message: `serve never said it runs:\n${serve.output()}`,
    });

    await redis.stop();
    serve.child.kill('SIGTERM');

    let code: number | null | undefined;
    serve.exited.then((c) => {
      code = c;
    });
    await waitUntil(() => code !== undefined, {
      timeoutMs: 30_000,
      message: `serve did not stop with Redis gone:\n${serve.output()}`,
    });
    expect(code).toBe(0);
    expect(serve.output()).toMatch(/"msg":"stopped"/);
  });
});
