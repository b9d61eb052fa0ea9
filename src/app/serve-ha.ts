/**
 * Several `serve` on one Postgres (DATABASE_URL) and Redis (REDIS_URL): one leader, hot
 * standbys (issue 33). A standby is hot: it opens bridge.db, the job queue and the modules a start
 * needs while it waits (bridge-prep.ts), and keeps a small HTTP server of its own on the bridge's address:
 * `/healthz`, `/readyz` (role `standby`, who leads and how fresh the lease is), `/metrics` (role
 * and lease age) and a console page that says it is a standby. It waits for the leader lease;
 * once it holds it, it closes that server and starts the whole bridge (startBridge) with the
 * lease's fencing token, and advertises its console address once that serves. A leader that loses its lease stops leading: `lost` resolves, and the
 * serve command stops the bridge and exits for its supervisor to start it again as a standby.
 */
import type { Config } from '../config.ts';
import { bridgeDbAnswers, countsBy } from '../db/health.ts';
import type { AnyBridgeDb } from '../db/migrator.ts';
import { refusePostgresWithoutRedis } from '../db/postgres-support.ts';
import { healthRoutes, Readiness } from '../http/health.ts';
import { BridgeMetrics, bearerOr } from '../http/metrics.ts';
import { sendText } from '../http/respond.ts';
import { HttpServer, isLoopbackHost, type RequestHandler } from '../http/server.ts';
import type { Log } from '../log.ts';
import { type RunningBridge, type StartBridgeOptions, startBridge } from './bridge.ts';
import { openBridgeDb, type PreparedBridge, prepareBridge } from './bridge-prep.ts';
import type { LeaderLease } from './leader-lease.ts';
import { advertiseUrlOf } from './public-url.ts';
import { standbyConsoleRoute } from './standby-console.ts';
import { startClock } from './start-clock.ts';

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
  // Hot: bridge.db, the queue and the modules are opened while waiting (bridge-prep.ts).
  let db: AnyBridgeDb | undefined;
  let preparing: Promise<PreparedBridge> | undefined;
  try {
    db = await openBridgeDb(config, log, true);
    const opened = db;
    preparing = prepareBridge(config, opened, log, leaseCommandTimeoutMs(config.leaderLeaseMs));
    standby = await startStandby(config, log, opened, lease, leaseAgeSeconds, preparing);
  } catch (err) {
    const queue = await preparing;
    await queue?.queue?.close();
    await db?.close();
    await lease.close();
    throw err;
  }
  const standbyUrl = standby.url;
  // Leading needs bridge.db: a bridge that cannot reach it neither takes nor keeps the lease.
  const openedDb = db;
  const dbAnswers = () => bridgeDbAnswers(openedDb);
  /** What the standby prepared, until the bridge (or the stop) takes it over. */
  let handedOver: Promise<PreparedBridge> | undefined = preparing;
  const leading = (async (): Promise<RunningBridge | undefined> => {
    const token = await lease.acquire(stopping.signal, dbAnswers);
    if (token === undefined) return undefined;
    const clock = startClock(log, 'takeover');
    log.info({ token, holder: lease.holder }, 'leader lease taken: starting the bridge');
    lease.keepRenewing((why) => {
      log.error({ why }, 'leader lease lost: this bridge stops leading');
      loseOnce(why);
    }, dbAnswers);
    const prepared = await handedOver;
    handedOver = undefined;
    clock.mark('standby preparation done');
    await standby?.close();
    standby = undefined;
    clock.mark('standby server closed');
    try {
      if (!prepared) throw new Error('the standby stopped before it led');
      bridge = await startBridge(config, log, {
        ...opts,
        leadership: {
          token,
          holder: lease.holder,
          leaseAgeSeconds,
          redisCommandTimeoutMs: leaseCommandTimeoutMs(config.leaderLeaseMs),
          onFenced: (err) => loseOnce(err.message),
          forwardKey: lease.forwardKey,
          leaseFresh: () => lease.fresh,
        },
        clock,
        prepared,
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
      // Never led: what the standby prepared is closed here (a bridge closes its own).
      const prepared = await handedOver;
      handedOver = undefined;
      await prepared?.queue?.close();
      await prepared?.db.close();
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

/**
 * The standby's HTTP server on `db` (bridge.db, migrated: the leader finds it ready). Its
 * `/readyz` says whether the takeover is prepared: the queue connected, the modules loaded.
 */
async function startStandby(
  config: Config,
  log: Log,
  db: AnyBridgeDb,
  lease: LeaderLease,
  leaseAgeSeconds: () => Promise<number | undefined>,
  preparing: Promise<PreparedBridge>,
): Promise<StandbyServer> {
  let prepared: PreparedBridge | undefined;
  void preparing.then((p) => {
    prepared = p;
    log.info('standby: prepared to take over (bridge.db, the job queue, the modules)');
  });
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
  // A note, not a failure (a standby stays ready): what a takeover would still have to open.
  readiness.add('takeover', async () => ({
    ready: true,
    detail: await takeoverNote(prepared),
  }));
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
  return { url: server.url, close: () => server.close() };
}

/** What `/readyz` says of a standby's preparation (bridge-prep.ts). */
async function takeoverNote(prepared: PreparedBridge | undefined): Promise<string> {
  if (prepared === undefined) return 'preparing: opening the job queue, loading modules';
  if (prepared.queue === undefined) return 'prepared, except the job queue (the takeover opens it)';
  const answers = await prepared.queue.get('probe:probe:0').then(
    (job) => job === null,
    () => false,
  );
  return answers
    ? 'prepared: bridge.db migrated, the job queue connected, the modules loaded'
    : 'prepared, but the job queue does not answer now';
}
