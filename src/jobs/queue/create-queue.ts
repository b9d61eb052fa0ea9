/**
 * Opens the configured job queue: BullMQ when a Redis URL is configured, else the embedded
 * sqlite queue in bridge.db (the default, nothing to install).
 */
import type { AnyBridgeDb } from '../../db/migrator.ts';
import { PhasebridgeError } from '../../errors.ts';
import type { BullmqQueueOptions } from './bullmq-options.ts';
import type { BullmqRetention } from './bullmq-retention.ts';
import type { ErrorReporter } from './outcome.ts';
import type { JobQueue } from './port.ts';
import { createSqliteQueue, type SqliteQueueOptions } from './sqlite-driver.ts';

/** Which driver to open, with its options. */
export type QueueConfig =
  | ({ driver: 'sqlite' } & SqliteQueueOptions)
  | ({ driver: 'bullmq' } & BullmqQueueOptions);

/** Opens a queue; the BullMQ driver fails fast with a ConfigError when Redis does not answer. */
export async function createJobQueue(config: QueueConfig): Promise<JobQueue> {
  if (config.driver === 'bullmq') {
    const { driver: _driver, ...opts } = config;
    // Loaded only here: bullmq + ioredis cost start-up time and memory a sqlite bridge never uses.
    const { createBullmqQueue } = await import('./bullmq-driver.ts');
    return createBullmqQueue(opts);
  }
  const { driver: _driver, ...opts } = config;
  return createSqliteQueue(opts);
}

/** The driver the configuration asks for: `bullmq` when `redisUrl` is set, else `sqlite` on `db`. */
export function queueConfigFor(opts: {
  db: AnyBridgeDb;
  redisUrl?: string | undefined;
  /** BullMQ: a vanished worker's job is taken again within this (lock and stalled check at half). */
  jobLeaseMs?: number;
  /** BullMQ: how long finished jobs stay in Redis (PHASEBRIDGE_RETAIN_JOBS), with count caps. */
  retention?: Partial<BullmqRetention>;
  /** BullMQ: bound of a Redis command of the queue (see BullmqQueueOptions). */
  commandTimeoutMs?: number;
  onError?: ErrorReporter;
}): QueueConfig {
  const base = opts.onError === undefined ? {} : { onError: opts.onError };
  const bound =
    opts.commandTimeoutMs === undefined ? {} : { commandTimeoutMs: opts.commandTimeoutMs };
  const retention = opts.retention === undefined ? {} : { retention: opts.retention };
  if (opts.redisUrl !== undefined && opts.redisUrl !== '') {
    return {
      driver: 'bullmq',
      url: opts.redisUrl,
      ...base,
      ...bullmqLease(opts.jobLeaseMs),
      ...retention,
      ...bound,
    };
  }
  if (opts.db.dialect !== 'sqlite') {
    // The embedded queue's table lives in SQLite (refusePostgresWithoutRedis says so first).
    throw new PhasebridgeError('CONFIG', 'the embedded job queue needs SQLite: set REDIS_URL');
  }
  return { driver: 'sqlite', db: opts.db, ...base };
}

/** BullMQ lock and stalled-check period for a lease: half each, so recovery fits in one lease. */
export function bullmqLease(leaseMs: number | undefined): {
  lockDurationMs?: number;
  stalledIntervalMs?: number;
} {
  if (leaseMs === undefined) return {};
  const half = Math.max(500, Math.floor(leaseMs / 2));
  return { lockDurationMs: half, stalledIntervalMs: half };
}
