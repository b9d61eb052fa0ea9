/**
 * Redis pieces of the BullMQ driver that BullMQ does not provide: a fail-fast reachability check,
 * our key names, and the per-run lock (open-source BullMQ has no "one job per group at a time").
 */
import { Redis } from 'ioredis';
import { ConfigError } from '../../errors.ts';
import { errorMessage } from './outcome.ts';

/** The Redis URL without its password, safe for messages and logs. */
export function redactRedisUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password !== '') u.password = '***';
    return u.toString();
  } catch {
    return '(unparseable Redis URL)';
  }
}

/**
 * Connects once, PINGs and disconnects. BullMQ would otherwise retry forever against a dead
 * Redis; this turns that into a ConfigError at start-up that says what to do.
 */
export async function assertRedisReachable(url: string, timeoutMs = 2000): Promise<void> {
  const client = new Redis(url, {
    lazyConnect: true,
    connectTimeout: timeoutMs,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: () => null,
  });
  client.on('error', () => {}); // the failure is reported by the rejected connect/ping below
  try {
    await client.connect();
    await client.ping();
  } catch (err) {
    throw new ConfigError([
      {
        path: 'REDIS_URL',
        problem: `no Redis answered at ${redactRedisUrl(url)} (${errorMessage(err)})`,
        fix: 'start Redis (e.g. apt-get install -y redis-server) or unset REDIS_URL to use the embedded sqlite queue',
      },
    ]);
  } finally {
    client.disconnect();
  }
}

/** Names of the keys and channel the driver adds next to BullMQ's own (same prefix). */
export class QueueKeys {
  constructor(
    private readonly prefix: string,
    private readonly queueName: string,
  ) {}

  /** Pub/sub channel carrying job ids to cancel, heard by every worker process. */
  get cancelChannel(): string {
    return `${this.prefix}:${this.queueName}:pb:cancel`;
  }

  /** Marks a cancelled job: a worker refuses to start it, and a re-enqueue is a no-op. */
  cancelled(jobId: string): string {
    return `${this.prefix}:${this.queueName}:pb:cancelled:${jobId}`;
  }

  /** The lock held by the one running job of a run. */
  runLock(runId: string): string {
    return `${this.prefix}:${this.queueName}:pb:run:${runId}`;
  }
}

const RENEW = `if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2]) else return 0 end`;
const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1]) else return 0 end`;

/**
 * A lock per run with a TTL. The holder renews it while its job runs; a crashed holder's lock
 * expires on its own (TTL = BullMQ's lockDuration, so it is free again by the time BullMQ
 * recovers the stalled job).
 */
export class RunLocks {
  constructor(
    private readonly redis: Redis,
    private readonly keys: QueueKeys,
    private readonly ttlMs: number,
  ) {}

  /** Takes the run's lock for `holder`; false when another job of the run holds it. */
  async acquire(runId: string, holder: string): Promise<boolean> {
    return (
      (await this.redis.set(this.keys.runLock(runId), holder, 'PX', this.ttlMs, 'NX')) === 'OK'
    );
  }

  /** Extends the lock if `holder` still has it. */
  async renew(runId: string, holder: string): Promise<boolean> {
    return (await this.redis.eval(RENEW, 1, this.keys.runLock(runId), holder, this.ttlMs)) === 1;
  }

  /** Frees the lock if `holder` still has it. */
  async release(runId: string, holder: string): Promise<void> {
    await this.redis.eval(RELEASE, 1, this.keys.runLock(runId), holder);
  }
}
