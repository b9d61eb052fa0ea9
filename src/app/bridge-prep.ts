/**
 * What a bridge opens that does not need the leader lease: bridge.db (opened with the leader's
 * pool, migrations checked), the job queue (connected) and the modules a start loads. A standby
 * (serve-ha.ts) does this while it waits, so winning the lease only starts what must be
 * exclusive: the fence claim, reconciling runs, the platforms, the outbox (docs/operations.md,
 * "When the lease is free"). Nothing here writes a run, claims an outbox row or calls a platform.
 */
import type { Config } from '../config.ts';
import { migrateToLatest } from '../db/connection.ts';
import type { AnyBridgeDb } from '../db/migrator.ts';
import { openConfiguredDb } from '../db/open.ts';
import { loadProjectionFactories } from '../engine/layouts/index.ts';
import { createJobQueue, queueConfigFor } from '../jobs/queue/create-queue.ts';
import type { JobQueue } from '../jobs/queue/port.ts';
import type { Log } from '../log.ts';
import { loadChannelModules } from './channels.ts';
import { leaseLostAfterMs } from './lease-times.ts';
import { bullmqRetention } from './retention.ts';

/** Postgres pool of a bridge: the feed, the outbox and the console query at once. */
const BRIDGE_POOL = 10;

/**
 * Opens bridge.db for a bridge and brings it to the latest migration. A leader's (`leading`)
 * sessions are ended after a while idle inside a transaction: a paused leader must not hold its
 * locks (the fence row's, the feed's advisory lock) against the bridge taking over.
 */
export async function openBridgeDb(
  config: Config,
  log: Log,
  leading: boolean,
): Promise<AnyBridgeDb> {
  const db = await openConfiguredDb(
    config,
    BRIDGE_POOL,
    // A leader's session idle inside a transaction (a paused process, a stopped machine) is ended
    // when the leader counts its lease lost anyway: its locks are gone before a standby leads.
    leading ? leaseLostAfterMs(config.leaderLeaseMs) : undefined,
  );
  try {
    const { applied } = await migrateToLatest(db);
    if (applied.length > 0) log.info({ applied }, 'bridge.db migrated');
    return db;
  } catch (err) {
    await db.close();
    throw err;
  }
}

/** Opens the configured job queue; `commandTimeoutMs` bounds a leader's Redis commands. */
export function openBridgeQueue(
  config: Config,
  db: AnyBridgeDb,
  log: Log,
  commandTimeoutMs: number | undefined,
): Promise<JobQueue> {
  return createJobQueue(
    queueConfigFor({
      db,
      redisUrl: config.redisUrl,
      jobLeaseMs: config.jobLeaseMs,
      retention: bullmqRetention(config),
      ...(commandTimeoutMs === undefined ? {} : { commandTimeoutMs }),
      onError: (err, context) => log.error({ err, context }, 'queue error'),
    }),
  );
}

/** What a standby prepared, handed to startBridge once it leads (which then owns and closes it). */
export interface PreparedBridge {
  /** bridge.db, migrated, with a leader's pool and idle-in-transaction bound. */
  readonly db: AnyBridgeDb;
  /** The job queue, connected; undefined when it could not be (the start opens it then). */
  readonly queue: JobQueue | undefined;
}

/**
 * Connects the queue and loads the modules a start needs (layouts, the configured adapters'
 * SDKs) for `db` opened by {@link openBridgeDb}. Never rejects: what failed is done again by the
 * start, which then reports it as it always did.
 */
export async function prepareBridge(
  config: Config,
  db: AnyBridgeDb,
  log: Log,
  commandTimeoutMs: number,
): Promise<PreparedBridge> {
  const [queue] = await Promise.all([
    openBridgeQueue(config, db, log, commandTimeoutMs).catch((err: unknown) => {
      log.warn({ err }, 'standby: the job queue did not open; the takeover opens it');
      return undefined;
    }),
    loadChannelModules(config).catch((err: unknown) => {
      log.warn({ err }, 'standby: an adapter module did not load; the takeover loads it');
    }),
    loadProjectionFactories().catch(() => undefined),
  ]);
  return { db, queue };
}
