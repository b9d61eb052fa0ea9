/**
 * The running bridge: bridge.db, the queue, the orchestrator, chatops, every configured adapter
 * and the HTTP server (web console, health, metrics, webhooks), started and stopped in order.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Channel, Platform } from '../bridges/channel.ts';
import { CONSOLE_CHAT_REF, orchestratorRunsSource, WEB_ADMIN } from '../bridges/web/index.ts';
import { ChatOps, createPairingCode } from '../chatops/index.ts';
import { type Config, SECRET_ENV_NAMES } from '../config.ts';
import { type BridgeDb, migrateToLatest, openBridgeDb } from '../db/connection.ts';
import { createRepositories, type Repositories } from '../db/repositories/index.ts';
import { healthRoutes, Readiness } from '../http/health.ts';
import { BridgeMetrics } from '../http/metrics.ts';
import { HttpServer } from '../http/server.ts';
import { Orchestrator, type RunUpdate } from '../jobs/orchestrator/orchestrator.ts';
import { createJobQueue, queueConfigFor } from '../jobs/queue/create-queue.ts';
import type { Log } from '../log.ts';
import { buildChannels } from './channels.ts';

/** Options of startBridge beyond the config. */
export interface StartBridgeOptions {
  /** In-process worker slots; false when only `phasebridge worker` processes run jobs. */
  worker?: { concurrency: number } | false;
  /** Minimum time between edits of one status message (default 1000 ms). */
  editIntervalMs?: number;
}

/** A started bridge: where to reach it, and how to stop it. */
export interface RunningBridge {
  /** Base URL of the HTTP server (web console, /healthz, /readyz, /metrics). */
  url: string;
  /** One-time console login link (like Jupyter's token URL). */
  loginUrl: string;
  /** One-time pairing code for `pair <code>` in a chat (valid 10 minutes). */
  pairingCode: string;
  /** Where runs started from the console or by pairing work. */
  workspace: string;
  orchestrator: Orchestrator;
  repos: Repositories;
  readiness: Readiness;
  /** Stops taking updates, lets running steps finish or hands them back, flushes, closes. */
  stop(): Promise<void>;
}

/** Starts everything; on a failure part-way, what was started is stopped again. */
export async function startBridge(
  config: Config,
  log: Log,
  opts: StartBridgeOptions = {},
): Promise<RunningBridge> {
  const stack: (() => Promise<void>)[] = [];
  const unwind = async () => {
    for (const stop of stack.reverse()) {
      await stop().catch((err: unknown) => log.error({ err }, 'bridge: error while stopping'));
    }
  };
  try {
    const db = openBridgeDb({ file: join(config.home, 'bridge.db') });
    stack.push(() => db.close());
    const { applied } = await migrateToLatest(db);
    if (applied.length > 0) log.info({ applied }, 'bridge.db migrated');
    const repos = createRepositories(db);
    const workspace = config.workspace;
    mkdirSync(workspace, { recursive: true });

    const queue = await createJobQueue(
      queueConfigFor({
        db,
        redisUrl: config.redisUrl,
        onError: (err) => log.error({ err }, 'queue error'),
      }),
    );
    stack.push(() => queue.close());
    const orchestrator = await Orchestrator.create({
      db,
      queue,
      log: log.child({ component: 'orchestrator' }),
      home: config.home,
      secretEnvNames: SECRET_ENV_NAMES,
      worker: opts.worker ?? { concurrency: 2 },
    });
    stack.push(() => orchestrator.close());

    const metrics = new BridgeMetrics({
      log,
      runsByStatus: async () => countBy(db, 'runs', 'status'),
      ...(queue.driver === 'sqlite'
        ? { jobsByState: async () => countBy(db, 'jobs', 'state') }
        : {}),
    });
    const offDecisions = orchestrator.onUpdate((u) => recordDecisions(metrics, u));
    stack.push(async () => offDecisions());
    const channels = await buildChannels(
      config,
      log,
      orchestratorRunsSource(orchestrator),
      (p) => (outcome) => metrics.platformCall(p, outcome),
    );
    await bindConsole(repos, workspace);
    const chatops = new ChatOps({
      orchestrator,
      repos,
      channels: channels.all,
      log: log.child({ component: 'chatops' }),
      defaultWorkspace: workspace,
      ...(opts.editIntervalMs !== undefined ? { editIntervalMs: opts.editIntervalMs } : {}),
    });
    await chatops.start();
    stack.push(() => chatops.stop());

    const readiness = new Readiness(log.child({ component: 'readiness' }));
    readiness.add('bridge.db', async () => db.sqlite.prepare('select 1').get() !== undefined);
    readiness.add('queue', async () => (await queue.get('probe:probe:0')) === null);
    const server = await HttpServer.start({
      host: config.host,
      port: config.port,
      log: log.child({ component: 'http' }),
      routes: [
        ...healthRoutes(readiness),
        { prefix: '/metrics', handler: channels.web.protect(metrics.handler()) },
        ...channels.routes,
        channels.web.route,
      ],
    });
    stack.push(() => server.close());

    // Each adapter is a probe before it starts: /readyz answers 503 until every one has started.
    const started = new Set<Platform>();
    for (const [platform, channel] of channels.all) {
      readiness.add(platform, async () => started.has(platform) && running(channel));
    }
    for (const [platform, channel] of channels.all) {
      await startChannel(channel, chatops.handle, log);
      started.add(platform);
      stack.push(() => channel.stop());
    }

    return {
      url: server.url,
      loginUrl: channels.web.loginUrl(server.url),
      pairingCode: await createPairingCode(repos),
      workspace,
      orchestrator,
      repos,
      readiness,
      stop: unwind,
    };
  } catch (err) {
    await unwind();
    throw err;
  }
}

/** Feeds the decision-latency histogram from the engine's checkpoint events. */
function recordDecisions(metrics: BridgeMetrics, update: RunUpdate): void {
  for (const event of update.events) {
    if (event.type !== 'checkpointResolved') continue;
    const cp = update.state.checkpoints.find((c) => c.id === event.checkpointId);
    if (cp) metrics.checkpointDecided(event.decision.answer, cp.openedAt, event.decision.at);
  }
}

/** The console chat is served from the start: bound to the workspace, its user the local admin. */
async function bindConsole(repos: Repositories, workspace: string): Promise<void> {
  const existing = await repos.bindings.find(CONSOLE_CHAT_REF, null);
  const binding = existing ?? (await repos.bindings.bind({ chatRef: CONSOLE_CHAT_REF, workspace }));
  await repos.allowlist.allow({ bindingId: binding.id }, WEB_ADMIN.platform, WEB_ADMIN.id, 'admin');
}

async function startChannel(channel: Channel, handler: ChatOps['handle'], log: Log): Promise<void> {
  await channel.start(handler);
  log.info({ platform: channel.platform }, 'adapter started');
}

function running(channel: Channel): boolean {
  const flag = (channel as { running?: unknown }).running;
  return flag === undefined ? true : flag === true;
}

function countBy(db: BridgeDb, table: 'runs' | 'jobs', column: 'status' | 'state') {
  const rows = db.sqlite
    .prepare(`select ${column} as k, count(*) as n from ${table} group by ${column}`)
    .all() as { k: string; n: number }[];
  return Object.fromEntries(rows.map((r) => [r.k, r.n]));
}
