/**
 * The leader lease in a real redis-server (issue 33): one holder at a time, a fencing token that
 * goes up with each acquisition, renewal that keeps it, release that hands it over at once, a
 * dead holder's lease taken after its ttl (as it expires, not a poll later), and a holder whose lease was taken told it lost. The
 * console address a holder advertises is seen with the lease it was advertised under only, and
 * is advertised through a Redis hiccup. A bridge whose bridge.db does not answer neither keeps
 * nor takes the lease.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LeaderLease } from '../../src/app/leader-lease.ts';
import { createLogger } from '../../src/log.ts';
import {
  inCi,
  NO_REDIS_BANNER,
  type RedisHandle,
  redisAvailable,
  startRedis,
} from '../support/redis.ts';
import { holdsFor, slow, waitUntil } from '../support/slowdown.ts';

const log = createLogger({ level: 'silent' });
const present = redisAvailable().ok;

if (!present && !inCi()) {
  describe('leader lease', () => {
    console.warn(NO_REDIS_BANNER);
    it.skip('needs redis-server', () => {});
  });
} else {
  describe('leader lease', () => {
    let redis: RedisHandle;
    const leases: LeaderLease[] = [];
    let n = 0;
    beforeAll(async () => {
      redis = await startRedis();
    }, slow(30_000));
    afterAll(async () => {
      for (const l of leases) await l.close();
      await redis?.stop();
    }, slow(30_000));
    // Each case its own key, so a lease of one never meets another's.
    const pair = async (ttlMs: number) => {
      const key = `test:leader:${process.pid}:${n++}`;
      const make = () => LeaderLease.connect({ redisUrl: redis.url, ttlMs: slow(ttlMs), log, key });
      const ab = [await make(), await make()] as const;
      leases.push(...ab);
      return ab;
    };

    it('has one holder; a release hands it over with a higher token', async () => {
      const [a, b] = await pair(5_000);
      const first = await a.tryAcquire();
      expect(first).toBeGreaterThan(0);
      expect(await b.tryAcquire()).toBeUndefined();
      expect((await b.current())?.holder).toBe(a.holder);
      await a.release();
      const second = await b.tryAcquire();
      expect(second).toBe(first! + 1);
      expect((await a.current())?.token).toBe(second);
    });

    it('is kept while renewed; a holder that stops renewing (dies) loses it after the ttl', async () => {
      const [a, b] = await pair(1_500);
      const token = await a.tryAcquire();
      const lost: string[] = [];
      a.keepRenewing((why) => lost.push(why));
      // Renewed: a standby polling all along never gets it, for well over one ttl.
      const standby = new AbortController();
      const taking = b.acquire(standby.signal);
      await holdsFor(() => lost.length === 0 && b.token === undefined, 3_000);
      standby.abort();
      expect(await taking).toBeUndefined();

      // A holder that took it and never renews (what a SIGKILL leaves): taken after its ttl.
      const [c, d] = await pair(1_500);
      const held = await c.tryAcquire();
      const started = Date.now();
      const took = await d.acquire(AbortSignal.timeout(slow(10_000)));
      expect(took).toBe(held! + 1);
      expect(Date.now() - started).toBeGreaterThan(1_000);
      expect(token).toBeDefined();
    });

    it("takes a dead holder's lease as it expires, not up to a poll later", async () => {
      const key = `test:leader:${process.pid}:${n++}`;
      const ttlMs = slow(1_000);
      // A poll much longer than the ttl: only asking again at the expiry takes it in time.
      const pollMs = slow(8_000);
      const make = () => LeaderLease.connect({ redisUrl: redis.url, ttlMs, log, key, pollMs });
      const [dead, standby] = [await make(), await make()];
      leases.push(dead, standby);
      const held = await dead.tryAcquire();
      const started = Date.now();
      const took = await standby.acquire(AbortSignal.timeout(slow(20_000)));
      const waited = Date.now() - started;
      expect(took).toBe(held! + 1);
      expect(waited).toBeGreaterThanOrEqual(ttlMs - 50);
      expect(
        waited,
        `taken ${waited} ms after the dead holder's lease (ttl ${ttlMs} ms)`,
      ).toBeLessThan(ttlMs + pollMs / 2);
    });

    it('tells a holder whose lease another took that it lost it, and stops it renewing', async () => {
      const [a, b] = await pair(1_500);
      const key = `test:leader:${process.pid}:${n - 1}`;
      await a.tryAcquire();
      const lost: string[] = [];
      a.keepRenewing((why) => lost.push(why));
      // A paused holder's key expired and another took it meanwhile.
      const raw = new Redis(redis.url);
      try {
        await raw.del(key);
      } finally {
        raw.disconnect();
      }
      expect(await b.tryAcquire()).toBeDefined();
      const why = await waitUntil(() => lost[0], { message: 'the old holder was not told' });
      expect(why).toContain('another bridge holds the leader lease');
      expect(a.token).toBeUndefined();
      // The new holder keeps it: the old one's renewals stopped and never extend it.
      expect((await b.current())?.holder).toBe(b.holder);
    });

    it('shows the console address advertised under the current token only; a former holder cannot advertise', async () => {
      const [a, b] = await pair(5_000);
      const key = `test:leader:${process.pid}:${n - 1}`;
      expect(await a.advertise('http://a.example:7717')).toBe(false);
      await a.tryAcquire();
      expect(await b.current()).not.toHaveProperty('url');
      expect(await a.advertise('http://a.example:7717')).toBe(true);
      expect(await b.current()).toMatchObject({
        holder: a.holder,
        url: 'http://a.example:7717',
        forwardKey: a.forwardKey,
      });
      expect(a.forwardKey).not.toBe(b.forwardKey);

      // `a` paused past its lease: the key expired and `b` took it. a's address is a stale
      // leader's: still in Redis, never shown with b's lease, and `a` cannot write it again.
      const raw = new Redis(redis.url);
      try {
        await raw.del(key);
        await b.tryAcquire();
        expect(await raw.exists(`${key}:console`)).toBe(1);
        const now = await a.current();
        expect(now?.holder).toBe(b.holder);
        expect(now).not.toHaveProperty('url');
        expect(await a.advertise('http://a.example:7717')).toBe(false);
        expect(await b.advertise('http://b.example:7717')).toBe(true);
        expect(await a.current()).toMatchObject({ url: 'http://b.example:7717' });

        // A clean release takes the address with the lease.
        await b.release();
        expect(await raw.exists(`${key}:console`)).toBe(0);
        expect(await a.current()).toBeUndefined();
      } finally {
        raw.disconnect();
      }
    });

    it('advertises through a Redis hiccup: a write that times out is tried again until it is in', async () => {
      const [a, b] = await pair(8_000);
      await a.tryAcquire();
      const raw = new Redis(redis.url);
      try {
        // Writes wait longer than two command timeouts (a quarter of the ttl each), well inside
        // the ttl; reads (the standby's) still answer.
        await raw.call('client', 'pause', String(slow(5_000)), 'WRITE');
        await expect(a.advertise('http://a.example:7717')).rejects.toThrow();
        const advertised = a.advertiseUntilIn(
          'http://a.example:7717',
          AbortSignal.timeout(slow(20_000)),
        );
        expect(await b.current()).not.toHaveProperty('url');
        expect(await advertised).toBe(true);
        expect((await b.current())?.url).toBe('http://a.example:7717');
      } finally {
        await raw.call('client', 'unpause');
        raw.disconnect();
      }
    });

    it('a holder whose bridge.db stops answering lets the lease go, and is told why', async () => {
      const [a, b] = await pair(1_500);
      let dbAnswers = true;
      const first = await a.tryAcquire();
      const lost: string[] = [];
      // The check hangs, as a query to a black-holed Postgres does.
      a.keepRenewing(
        (why) => lost.push(why),
        () => (dbAnswers ? Promise.resolve(true) : new Promise<boolean>(() => {})),
      );
      await holdsFor(
        () => lost.length === 0 && a.fresh,
        1_000,
        'lost (or stale) while bridge.db answered',
      );
      dbAnswers = false;
      // Stale (its worker takes no job) before it counts the lease lost, and lost after.
      await waitUntil(() => !a.fresh, { message: 'the holder stayed fresh without bridge.db' });
      const why = await waitUntil(() => lost[0], { message: 'the holder was not told' });
      expect(why).toContain('bridge.db did not answer');
      expect(a.token).toBeUndefined();
      expect(a.fresh).toBe(false);
      // Not renewed any more: a standby that reaches bridge.db takes it once it expires.
      const took = await b.acquire(AbortSignal.timeout(slow(10_000)), async () => true);
      expect(took).toBe(first! + 1);
    });

    it('a standby that cannot reach bridge.db leaves a free lease alone until it can', async () => {
      const [, b] = await pair(1_500);
      let dbAnswers = false;
      const taking = b.acquire(AbortSignal.timeout(slow(20_000)), async () => {
        if (!dbAnswers) throw new Error('connect ECONNREFUSED');
        return true;
      });
      expect((await b.current())?.holder).toBeUndefined();
      await holdsFor(
        async () => (await b.current()) === undefined,
        1_000,
        'taken without bridge.db',
      );
      dbAnswers = true;
      expect(await taking).toBeGreaterThan(0);
      expect((await b.current())?.holder).toBe(b.holder);
    });
  });
}
