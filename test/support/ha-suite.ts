/**
 * The frame of the HA stories: databases on the process's shared postgres (`sharedPostgres`: the
 * stories kill serves, never the database server) and one redis-server for the file, cleanups run after
 * each story, and a skip line naming both tools where they are missing (never in CI, which
 * installs them).
 */
import { afterAll, afterEach, beforeAll, describe, it } from 'vitest';
import { TcpProxy } from '../fakes/tcp-proxy.ts';
import {
  NO_POSTGRES_LINE,
  type PostgresHandle,
  postgresBinDir,
  sharedPostgres,
} from './postgres.ts';
import { inCi, type RedisHandle, redisAvailable, startRedis } from './redis.ts';
import { slow } from './slowdown.ts';

/** What a story of the suite gets (`pg` and `redis` once the file's servers are up). */
export interface HaSuite {
  pg: PostgresHandle;
  redis: RedisHandle;
  /** Run after each story, the last added first. */
  readonly cleanups: (() => Promise<void> | void)[];
}

/** Registers `title`'s stories with their servers; skipped (saying why) without the tools. */
export function describeHa(title: string, what: string, stories: (suite: HaSuite) => void): void {
  if (postgresBinDir() === undefined || !redisAvailable().ok) {
    if (!inCi()) {
      describe(title, () => {
        console.warn(`${NO_POSTGRES_LINE} (and redis-server): ${what} skipped`);
        it.skip(`${NO_POSTGRES_LINE}, or no redis-server`, () => {});
      });
      return;
    }
  }
  describe(title, () => {
    const suite = { cleanups: [] } as unknown as HaSuite;
    beforeAll(async () => {
      [suite.pg, suite.redis] = await Promise.all([sharedPostgres(), startRedis()]);
    }, slow(60_000));
    afterEach(async () => {
      for (const c of suite.cleanups.splice(0).reverse()) await c();
    }, slow(60_000));
    afterAll(async () => {
      await Promise.all([suite.pg?.stop(), suite.redis?.stop()]);
    }, slow(30_000));
    stories(suite);
  });
}

/** A proxy in front of the server at `url` (the suite's Redis, or a story's Postgres database), closed after the story, and the URL through it. */
export async function behindProxy(
  suite: HaSuite,
  url: string,
): Promise<{ proxy: TcpProxy; url: string }> {
  const front = await TcpProxy.inFront(url);
  suite.cleanups.push(() => front.proxy.close());
  return front;
}

/** A proxy in front of the suite's Redis (see behindProxy). */
export function redisBehindProxy(suite: HaSuite): Promise<{ proxy: TcpProxy; url: string }> {
  return behindProxy(suite, suite.redis.url);
}
