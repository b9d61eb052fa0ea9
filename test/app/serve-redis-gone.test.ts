/**
 * `serve` on BullMQ stopped while its Redis is gone (an operator's SIGTERM during an outage): it
 * stops, says so and exits 0, instead of waiting for a Redis that does not come back until the
 * service manager's SIGKILL (the BullMQ driver's close never ended: bullmq-reconnect.ts). Also
 * when the network to Redis drops every packet: the close then waits its bound and cuts the
 * connections (bullmq-close.ts).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TcpProxy } from '../fakes/tcp-proxy.ts';
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
    const serve = await runningServe(redis.url);
    await redis.stop();
    expect(await stopped(serve)).toBe(0);
    expect(serve.output()).toMatch(/"msg":"stopped"/);
  });

  it('SIGTERM while the network to Redis drops every packet: it stops, saying why', async () => {
    const redis = await startRedis();
    cleanups.push(() => redis.stop());
    const { proxy, url } = await TcpProxy.inFront(redis.url);
    cleanups.push(() => proxy.close());
    const serve = await runningServe(url);
    proxy.cut('blackhole');
    expect(await stopped(serve)).toBe(0);
    expect(serve.output()).toMatch(/did not answer for 10 s.*connections were cut/);
    expect(serve.output()).toMatch(/"msg":"stopped"/);
  });
});

/** A `serve` on BullMQ at `redisUrl`, once it says it runs. */
async function runningServe(redisUrl: string): Promise<ServeProcess> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-redis-gone-'));
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  const serve: ServeProcess = await spawnServe({
    name: 'a',
    dir,
    env: {
      PHASEBRIDGE_WORKSPACE: path.join(dir, 'ws'),
      LOG_LEVEL: 'info',
      REDIS_URL: redisUrl,
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
  return serve;
}

/** Sends SIGTERM; resolves with the exit code, or fails when the bridge does not stop. */
async function stopped(serve: ServeProcess): Promise<number | null> {
  serve.child.kill('SIGTERM');
  let code: number | null | undefined;
  serve.exited.then((c) => {
    code = c;
  });
  await waitUntil(() => code !== undefined, {
    timeoutMs: 40_000,
    message: `serve did not stop:\n${serve.output()}`,
  });
  return code ?? null;
}
