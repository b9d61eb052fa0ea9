/**
 * The leader lease of several `serve` on one Postgres and Redis (issue 33). One key holds the
 * lease (`SET … NX PX ttl`, in one script with the `INCR` of its fencing token, so no lease is
 * ever held without a token), renewed every third of the ttl by the holder only and deleted on a
 * clean stop. A holder that cannot renew for 80 % of the ttl counts itself lost before the key
 * can expire, so two processes never both believe they lead; the fencing token covers a process
 * paused past that (db/leader-fence.ts). The holder advertises where its console answers in a
 * second key, `<key>:console` ("token forward-key url"), written only while the lease is ours:
 * standbys forward the console there (http/forward.ts), and only while its token is the lease's,
 * so a stale leader's address is never used. A separate key, not the lease's value: changing
 * that value would race the holder's own renewals, which compare it.
 */
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import { Redis } from 'ioredis';
import type { Log } from '../log.ts';
import { within } from '../within.ts';
import { leaseLostAfterMs } from './lease-times.ts';

/**
 * Takes the lease if free: its value is "token ttl holder"; returns the new token (> 0), or when
 * held minus the ms it has left (≤ 0), for the standby to ask again right as it expires; a key
 * without expiry (never written so) says a very long time: the standby asks every poll.
 */
const ACQUIRE = `
local left = redis.call('pttl', KEYS[1])
if left >= 0 then return -left end
if left == -1 then return -2147483647 end
local t = redis.call('incr', KEYS[2])
redis.call('set', KEYS[1], t .. ' ' .. ARGV[2] .. ' ' .. ARGV[1], 'NX', 'PX', ARGV[2])
return t`;
/** Extends the lease only while it is still ours. */
const RENEW = `
if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) end
return 0`;
/** Deletes the lease (and the console address advertised under it) only while it is ours. */
const RELEASE = `
if redis.call('get', KEYS[1]) == ARGV[1] then
  redis.call('del', KEYS[2])
  return redis.call('del', KEYS[1])
end
return 0`;
/** Writes the console address only while the lease is ours. */
const ADVERTISE = `
if redis.call('get', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('set', KEYS[2], ARGV[2])
return 1`;

/**
 * How long a leader's Redis command may go unanswered before it fails: a quarter of the ttl. A
 * renewal must fail in time to be tried again before 80 % of the ttl; the queue's commands of a
 * leader use it too, so an enqueue into a silent Redis (a network cut dropping packets) fails
 * after its four tries (effects.ts) in about the ttl plus 1.3 s, within the 5 s a leader that lost
 * its lease is given to stop, instead of hanging with the run's mutex and an update in hand.
 */
export function leaseCommandTimeoutMs(ttlMs: number): number {
  return Math.max(200, Math.floor(ttlMs / 4));
}

/** Answers whether what a leader leads with (bridge.db) is reachable; a rejection counts as no. */
export type HealthCheck = () => Promise<boolean>;

const NOT_TAKEN =
  'leader lease: bridge.db does not answer here; not taking the lease until it does';

/** True when `check` answers true within `ms`; false on false, a rejection or no answer. */
async function answersWithin(check: HealthCheck, ms: number): Promise<boolean> {
  return (await within(check(), ms)) === true;
}

/** Who holds the lease now, as Redis says. */
export interface LeaseHolder {
  readonly holder: string;
  readonly token: number;
  /** Time since the holder last renewed it (ms). */
  readonly ageMs: number;
  /** Where the holder's console answers, when it advertised it under this token. */
  readonly url?: string;
  /** The key its forwarded requests carry (a secret: never logged), with `url`. */
  readonly forwardKey?: string;
}

/** Options of {@link LeaderLease}. */
export interface LeaderLeaseOptions {
  readonly redisUrl: string;
  readonly ttlMs: number;
  readonly log: Log;
  /** How often a standby tries to take the lease (default a tenth of the ttl). */
  readonly pollMs?: number;
  /** The Redis key (default `phasebridge:leader`; its token counter is `<key>:fence`). */
  readonly key?: string;
}

/** One process's side of the lease: try, wait for, renew, release. */
export class LeaderLease {
  /** This process, as the lease and `/readyz` name it: host, pid and a random part. */
  readonly holder = `${os.hostname()}/${process.pid}/${randomBytes(3).toString('hex')}`;
  /**
   * What requests forwarded to this process carry, advertised with its console address: only
   * bridges that read the lease (Redis) know it, so only they skip this leader's Host check.
   */
  readonly forwardKey = randomBytes(24).toString('base64url');
  readonly #o: LeaderLeaseOptions;
  readonly #redis: Redis;
  readonly #key: string;
  readonly #consoleKey: string;
  #value: string | undefined;
  #token: number | undefined;
  #renewer: NodeJS.Timeout | undefined;
  /** When the lease was last renewed (counted from the request), while keepRenewing runs. */
  #lastRenewedAt: number | undefined;
  /** Fires when the lease went unrenewed for 80 % of its ttl (keepRenewing). */
  #watchdog: NodeJS.Timeout | undefined;
  #closed = false;

  private constructor(o: LeaderLeaseOptions, redis: Redis) {
    this.#o = o;
    this.#redis = redis;
    this.#key = o.key ?? 'phasebridge:leader';
    this.#consoleKey = `${this.#key}:console`;
  }

  /** How long a health check may take before it counts as no answer: a Redis command's bound. */
  get #boundMs(): number {
    return leaseCommandTimeoutMs(this.#o.ttlMs);
  }

  /** Connects to Redis; commands fail fast while it is unreachable (a lease cannot wait). */
  static async connect(o: LeaderLeaseOptions): Promise<LeaderLease> {
    const redis = new Redis(o.redisUrl, {
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      enableOfflineQueue: false,
      commandTimeout: leaseCommandTimeoutMs(o.ttlMs),
      connectTimeout: Math.max(1_000, leaseCommandTimeoutMs(o.ttlMs)),
      retryStrategy: (n) => Math.min(n * 100, 1000),
    });
    redis.on('error', (err) => o.log.debug?.({ err }, 'leader lease: redis error'));
    await redis.connect();
    return new LeaderLease(o, redis);
  }

  /**
   * True while this process holds the lease and renewed it within 70 % of the ttl: renewals come
   * every third, so only a leader whose renewals failed for a while (Redis or bridge.db silent)
   * is stale, well before a standby could take the lease at 100 %.
   */
  get fresh(): boolean {
    const at = this.#lastRenewedAt;
    return this.#token !== undefined && at !== undefined && Date.now() - at < this.#o.ttlMs * 0.7;
  }

  /** The fencing token of the lease this process holds, or undefined. */
  get token(): number | undefined {
    return this.#token;
  }

  /** Takes the lease if nobody holds it; the new fencing token, or undefined. */
  async tryAcquire(): Promise<number | undefined> {
    return (await this.#tryAcquire()).token;
  }

  /** Takes the lease if free: its token; else how long the holder's lease has left. */
  async #tryAcquire(): Promise<{ token?: number; leftMs?: number }> {
    const t = (await this.#redis.eval(
      ACQUIRE,
      2,
      this.#key,
      `${this.#key}:fence`,
      this.holder,
      String(this.#o.ttlMs),
    )) as number;
    if (t <= 0) return { leftMs: -t };
    this.#token = t;
    this.#value = `${t} ${this.#o.ttlMs} ${this.holder}`;
    return { token: t };
  }

  /**
   * Tries every poll interval until the lease is ours (its token) or `signal` aborts (undefined);
   * a lease with less than a poll left is asked for again as it expires (a dead holder's lease is
   * taken at its expiry, not up to a poll later). A Redis error is logged and tried again after a
   * poll, never longer: a standby waits out an outage. With `healthy`, the lease is asked for only
   * while it answers in time.
   */
  async acquire(signal: AbortSignal, healthy?: HealthCheck): Promise<number | undefined> {
    let unhealthy = false;
    while (!signal.aborted && !this.#closed) {
      let waitMs: number | undefined;
      try {
        // A bridge that cannot reach what it would lead with (bridge.db) leaves the lease alone.
        if (healthy && !(await answersWithin(healthy, this.#boundMs))) {
          if (!unhealthy) this.#o.log.warn(NOT_TAKEN);
          unhealthy = true;
          await this.#pause(signal);
          continue;
        }
        if (unhealthy)
          this.#o.log.info('leader lease: bridge.db answers again; asking for the lease');
        unhealthy = false;
        const { token, leftMs } = await this.#tryAcquire();
        if (token !== undefined) return token;
        // 1 ms past: the key is gone for Redis by then (it expires on the ms).
        if (leftMs !== undefined) waitMs = leftMs + 1;
      } catch (err) {
        this.#o.log.warn({ err }, 'leader lease: could not ask Redis; trying again');
      }
      await this.#pause(signal, waitMs);
    }
    return undefined;
  }

  /** One poll interval (or `atMostMs` when shorter), or less when `signal` aborts. */
  #pause(signal: AbortSignal, atMostMs?: number): Promise<void> {
    const pollMs = Math.min(
      this.#o.pollMs ?? Math.max(100, Math.floor(this.#o.ttlMs / 10)),
      atMostMs ?? Number.POSITIVE_INFINITY,
    );
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(t);
        signal.removeEventListener('abort', done);
        resolve();
      };
      const t = setTimeout(done, pollMs);
      signal.addEventListener('abort', done, { once: true });
    });
  }

  /**
   * Renews every third of the ttl; `onLost` is called once when the lease was taken by another
   * or could not be renewed for 80 % of the ttl (it may expire soon after: stop leading now).
   * With `healthy`, a renewal happens only when it answers in time: a leader cut off from its
   * bridge.db lets the lease go to a standby that reaches it.
   */
  keepRenewing(onLost: (why: string) => void, healthy?: HealthCheck): void {
    const ttl = this.#o.ttlMs;
    const limit = leaseLostAfterMs(ttl);
    let lastOk = Date.now();
    this.#lastRenewedAt = lastOk;
    let lost = false;
    let renewing = false;
    let sick = false;
    const lose = (why: string) => {
      if (lost) return;
      lost = true;
      this.#stopRenewing();
      this.#token = undefined;
      onLost(why);
    };
    // Lost at 80 % of the ttl on the dot, even while a renewal still waits for its answer: a
    // check at the next tick could come after the key expired and a standby took over.
    const arm = () => {
      if (this.#watchdog) clearTimeout(this.#watchdog);
      this.#watchdog = setTimeout(
        () =>
          lose(
            sick
              ? `bridge.db did not answer for ${limit} ms`
              : `the lease was not renewed for ${limit} ms`,
          ),
        Math.max(0, lastOk + limit - Date.now()),
      );
    };
    const renew = async () => {
      // One at a time: a check that waits out its bound must not pile renewals up behind it.
      if (renewing || lost) return;
      renewing = true;
      // Counted from before the call: the key's new expiry is at most ttl after the request.
      const sent = Date.now();
      try {
        const answers = healthy === undefined || (await answersWithin(healthy, this.#boundMs));
        sick = !answers;
        if (sick) {
          this.#o.log.warn('leader lease: bridge.db does not answer; the lease is not renewed');
        } else {
          const ok = await this.#redis.eval(RENEW, 1, this.#key, this.#value ?? '', String(ttl));
          if (Number(ok) !== 1) return lose('another bridge holds the leader lease');
          lastOk = sent;
          this.#lastRenewedAt = sent;
          if (!lost) arm();
        }
      } catch (err) {
        this.#o.log.warn({ err }, 'leader lease: renewal failed');
      } finally {
        renewing = false;
      }
    };
    arm();
    this.#renewer = setInterval(() => void renew(), Math.max(100, Math.floor(ttl / 3)));
  }

  #stopRenewing(): void {
    if (this.#renewer) clearInterval(this.#renewer);
    this.#renewer = undefined;
    if (this.#watchdog) clearTimeout(this.#watchdog);
    this.#watchdog = undefined;
  }

  /**
   * Advertises `url` as this leader's console, for standbys to forward to. True when written;
   * false when the lease is not ours (any more); rejects when Redis does not answer (try again).
   */
  async advertise(url: string): Promise<boolean> {
    const value = this.#value;
    if (value === undefined) return false;
    const record = `${this.#token} ${this.forwardKey} ${url}`;
    const ok = await this.#redis.eval(ADVERTISE, 2, this.#key, this.#consoleKey, value, record);
    return Number(ok) === 1;
  }

  /**
   * {@link advertise}, tried again every poll interval while Redis does not answer (a hiccup must
   * not leave the standbys without the address). True once written; false once the lease is not
   * ours, or `signal` aborted first.
   */
  async advertiseUntilIn(url: string, signal: AbortSignal): Promise<boolean> {
    let warned = false;
    while (!signal.aborted && !this.#closed) {
      try {
        return await this.advertise(url);
      } catch (err) {
        // The message only: a Redis error carries the command's arguments, the forward key too.
        if (!warned) {
          this.#o.log.warn(
            { error: (err as Error).message },
            'leader lease: the console address was not advertised; trying again',
          );
        }
        warned = true;
      }
      await this.#pause(signal);
    }
    return false;
  }

  /** Who holds the lease now, or undefined when nobody does (or Redis does not answer). */
  async current(): Promise<LeaseHolder | undefined> {
    try {
      // One MGET: the lease and the address are read at one instant.
      const [[value, advertised], pttl] = await Promise.all([
        this.#redis.mget(this.#key, this.#consoleKey),
        this.#redis.pttl(this.#key),
      ]);
      if (value === null || value === undefined) return undefined;
      const [token, ttl, ...holder] = value.split(' ');
      const [adToken, forwardKey, url] = (advertised ?? '').split(' ');
      return {
        holder: holder.join(' '),
        token: Number(token),
        ageMs: Math.max(0, Number(ttl) - Math.max(0, pttl)),
        // An address advertised under another token is a former leader's: never used.
        ...(adToken === token && forwardKey && url ? { url, forwardKey } : {}),
      };
    } catch {
      return undefined;
    }
  }

  /** Stops renewing and deletes the lease if it is still ours (a clean stop hands over at once). */
  async release(): Promise<void> {
    this.#stopRenewing();
    const value = this.#value;
    this.#token = undefined;
    this.#value = undefined;
    if (value === undefined) return;
    await this.#redis.eval(RELEASE, 2, this.#key, this.#consoleKey, value).catch((err: unknown) => {
      this.#o.log.warn({ err }, 'leader lease: not released (it expires on its own)');
    });
  }

  /** Releases and disconnects. */
  async close(): Promise<void> {
    if (this.#closed) return;
    await this.release();
    this.#closed = true;
    this.#redis.disconnect();
  }
}
