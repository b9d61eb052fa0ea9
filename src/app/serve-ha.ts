/**
 * Several `serve` on one Postgres (DATABASE_URL) and Redis (REDIS_URL): one leader, hot
 * standbys (issue 33). A standby keeps a small HTTP server of its own on the bridge's address:
 * `/healthz`, `/readyz` (role `standby`, who leads and how fresh the lease is), `/metrics` (role
 * and lease age) and a console page that says it is a standby. It waits for the leader lease;
 * once it holds it, it closes that server and starts the whole bridge (startBridge) with the
 * lease's fencing token, and advertises its console address once that serves. A leader that loses its lease stops leading: `lost` resolves, and the
 * serve command stops the bridge and exits for its supervisor to start it again as a standby.
 */
import type { Config } from '../config.ts';
import { migrateToLatest } from '../db/connection.ts';
import { bridgeDbAnswers, countsBy } from '../db/health.ts';
import { openConfiguredDb } from '../db/open.ts';
import { refusePostgresWithoutRedis } from '../db/postgres-support.ts';
import { healthRoutes, Readiness } from '../http/health.ts';
import { BridgeMetrics, bearerOr } from '../http/metrics.ts';
import { sendText } from '../http/respond.ts';
import { HttpServer, isLoopbackHost, type RequestHandler } from '../http/server.ts';
import type { Log } from '../log.ts';
import { type RunningBridge, type StartBridgeOptions, startBridge } from './bridge.ts';
import type { LeaderLease } from './leader-lease.ts';
import { advertiseUrlOf } from './public-url.ts';
import { standbyConsoleRoute } from './standby-console.ts';

/** True when `serve` elects a leader: bridge.db on Postgres and jobs on Redis. */
export function leaseWanted(config: Config): boolean {
  return config.databaseUrl !== undefined && (config.redisUrl ?? '') !== '';
}

/** A `serve` that may be a standby for a while. */
export interface ServeHandle {
  /** Resolves with the bridge once this process leads; undefined when stopped before. */
  readonly leading: Promise<RunningBridge | undefined>;
  /** Resolves with why once this process, having led, lost the lease (it must stop). */
  readonly lost: Promise<string>;
  /** The standby's own server (the bridge's once leading). */
  readonly standbyUrl: string | undefined;
  /** Stops whichever part runs; a leader releases its lease, so a standby takes over at once. */
  stop(): Promise<void>;
}

/**
 * Starts `serve`: without a lease to hold (the embedded default, or Postgres without Redis,
 * which startBridge refuses) the bridge at once; with one, a standby until the lease is ours.
 */
export async function startServe(
  config: Config,
  log: Log,
  opts: StartBridgeOptions = {},
): Promise<ServeHandle> {
  refusePostgresWithoutRedis(config);
  if (!leaseWanted(config)) {
    const bridge = await startBridge(config, log, opts);
    return {
      leading: Promise.resolve(bridge),
      lost: new Promise<string>(() => {}),
      standbyUrl: undefined,
      stop: () => bridge.stop(),
    };
  }
  // Loaded only here: the embedded default never loads a Redis client for the lease.
  const [{ assertRedisReachable }, { LeaderLease, leaseCommandTimeoutMs }] = await Promise.all([
    import('../jobs/queue/bullmq-redis.ts'),
    import('./leader-lease.ts'),
  ]);
  // A dead Redis is one line that says what to do, as for the queue, not a client's retries.
  await assertRedisReachable(config.redisUrl!);
  const lease = await LeaderLease.connect({
    redisUrl: config.redisUrl!,
    ttlMs: config.leaderLeaseMs,
    log: log.child({ component: 'lease' }),
  });
  const stopping = new AbortController();
  let advertising: Promise<void> | undefined;
  let standby: StandbyServer | undefined;
  let bridge: RunningBridge | undefined;
  let loseOnce: (why: string) => void = () => {};
  const lost = new Promise<string>((resolve) => {
    loseOnce = resolve;
  });
  const leaseAgeSeconds = async () => {
    const held = await lease.current();
    return held === undefined ? undefined : held.ageMs / 1000;
  };
  try {
    standby = await startStandby(config, log, lease, leaseAgeSeconds);
  } catch (err) {
    await lease.close();
    throw err;
  }
  const standbyUrl = standby.url;
  const leading = (async (): Promise<RunningBridge | undefined> => {
    const token = await lease.acquire(stopping.signal);
    if (token === undefined) return undefined;
    log.info({ token, holder: lease.holder }, 'leader lease taken: starting the bridge');
    lease.keepRenewing((why) => {
      log.error({ why }, 'leader lease lost: this bridge stops leading');
      loseOnce(why);
    });
    await standby?.close();
    standby = undefined;
    try {
      bridge = await startBridge(config, log, {
        ...opts,
        leadership: {
          token,
          holder: lease.holder,
          leaseAgeSeconds,
          redisCommandTimeoutMs: leaseCommandTimeoutMs(config.leaderLeaseMs),
          onFenced: (err) => loseOnce(err.message),
          forwardKey: lease.forwardKey,
        },
      });
    } catch (err) {
      // Not leading after all: the lease goes at once, so another bridge need not wait it out.
      await lease.close();
      throw err;
    }
    // Advertised once the console answers, so a standby never forwards to a server not up yet.
    const url = advertiseUrlOf(config, bridge.url);
    if (url === undefined) {
      log.warn(
        { host: config.host },
        'leader: bound to a wildcard address, so standbys cannot forward the console here: set PHASEBRIDGE_ADVERTISE_URL to an address the other bridges reach',
      );
    } else {
      advertising = lease.advertiseUntilIn(url, stopping.signal).then((advertised) => {
        // Not advertised: the lease is gone (`lost` says so) or this bridge is stopping.
        if (advertised) log.info({ url }, 'leader: console address advertised to the standbys');
      });
    }
    return bridge;
  })();
  return {
    leading,
    lost,
    standbyUrl,
    stop: async () => {
      stopping.abort();
      await standby?.close();
      await leading.catch(() => undefined);
      await advertising;
      await bridge?.stop();
      await lease.close();
    },
  };
}

interface StandbyServer {
  readonly url: string;
  close(): Promise<void>;
}

/** The standby's bridge.db (migrated: the leader finds it ready) and its HTTP server. */
async function startStandby(
  config: Config,
  log: Log,
  lease: LeaderLease,
  leaseAgeSeconds: () => Promise<number | undefined>,
): Promise<StandbyServer> {
  const db = await openConfiguredDb(config, 2);
  try {
    await migrateToLatest(db);
    const readiness = new Readiness(log.child({ component: 'readiness' }));
    readiness.add('bridge.db', () => bridgeDbAnswers(db));
    readiness.add('leader', async () => {
      const held = await lease.current();
      const forwarding = held?.url === undefined ? 'not advertised yet' : 'forwarded to it';
      return {
        ready: true,
        detail:
          held === undefined
            ? 'standby: no leader holds the lease (taking it)'
            : `standby: the leader is ${held.holder} (fencing token ${held.token}, lease renewed ${held.ageMs} ms ago; console ${forwarding})`,
      };
    });
    const metrics = new BridgeMetrics({
      log,
      info: { role: 'standby', database: db.dialect, queue: 'bullmq' },
      runsByStatus: () => countsBy(db, 'runs', 'status'),
      leaseAgeSeconds,
    });
    // No console sessions here: a scraper's bearer token, or loopback when asked for.
    const refuse: RequestHandler = (_req, res) =>
      sendText(res, 401, 'a standby serves /metrics to PHASEBRIDGE_METRICS_TOKEN only\n');
    const server = await HttpServer.start({
      host: config.host,
      port: config.port,
      allowedHosts: config.publicUrl === undefined ? [] : [new URL(config.publicUrl).hostname],
      log: log.child({ component: 'http' }),
      // Short: the leader's server binds this port as soon as this one is closed.
      closeGraceMs: 200,
      routes: [
        ...healthRoutes(readiness, () => 'standby'),
        {
          prefix: '/metrics',
          handler:
            config.metricsOpen === 'loopback' && isLoopbackHost(config.host)
              ? metrics.handler()
              : bearerOr(config.metricsToken, () => refuse, metrics.handler()),
        },
        standbyConsoleRoute(
          config,
          async () => {
            const held = await lease.current();
            return held && { holder: held.holder, url: held.url, key: held.forwardKey };
          },
          log.child({ component: 'forward' }),
        ),
      ],
    });
    log.info({ url: server.url }, 'standby: waiting for the leader lease');
    return {
      url: server.url,
      close: async () => {
        await server.close();
        await db.close();
      },
    };
  } catch (err) {
    await db.close();
    throw err;
  }
}
