/**
 * The running bridge: bridge.db, the queue, the orchestrator, chatops, every configured adapter
 * and the HTTP server (web console, health, metrics, webhooks), started and stopped in order.
 */

import type { Platform } from '../bridges/channel.ts';
import { type Outbox, withOutboxes } from '../bridges/outbox/index.ts';
import { outboxStoreOf } from '../bridges/outbox/store-of.ts';
import { CONSOLE_CHAT_REF, orchestratorRunsSource, WEB_ADMIN } from '../bridges/web/index.ts';
import { ChatOps, createPairingCode } from '../chatops/index.ts';
import { type Config, SECRET_ENV_NAMES, secretsOf } from '../config.ts';
import { probeBridge } from '../control/client.ts';
import { controlSocketPath } from '../control/protocol.ts';
import { startControlServer } from '../control/server.ts';
import { startBackgroundCheckpoints } from '../db/checkpointer.ts';
import { bridgeDbAnswers } from '../db/health.ts';
import { claimFence, currentFence, FencedError } from '../db/leader-fence.ts';
import { refusePostgresWithoutRedis } from '../db/postgres-support.ts';
import {
  createRepositories,
  type Repositories,
  type UnreachableChat,
} from '../db/repositories/index.ts';
import { ConflictError } from '../errors.ts';
import { makeDirs } from '../fs-errors.ts';
import { isForwardedWith } from '../http/forward.ts';
import { healthRoutes, Readiness, type ReadyWithNote } from '../http/health.ts';
import { bearerOr } from '../http/metrics.ts';
import { HttpServer, isLoopbackHost } from '../http/server.ts';
import { Orchestrator } from '../jobs/orchestrator/orchestrator.ts';
import type { JobQueue } from '../jobs/queue/port.ts';
import type { Log } from '../log.ts';
import { AdapterSupervisor } from './adapter-supervisor.ts';
import { bridgeMetrics, recordDecisions } from './bridge-metrics.ts';
import { openBridgeDb, openBridgeQueue, type PreparedBridge } from './bridge-prep.ts';
import { buildChannels } from './channels.ts';
import { consoleAdmin } from './console-admin.ts';
import { consoleQueue } from './console-queue.ts';
import { FencedInbound, type Leadership } from './leadership.ts';
import { namedRunsIndex } from './named-runs-index.ts';
import { outboxRefusals, type RefusalTarget } from './outbox-refusals.ts';
import { type PruneSchedule, schedulePrune } from './retention.ts';
import { type StartClock, startClock } from './start-clock.ts';
import { describeWorker, WorkerWatch } from './worker-watch.ts';

/** How long a losing leader lets the updates it is applying settle before giving its runs up. */
const RELINQUISH_SETTLE_MS = 1_500;

/** How long a stop lets deliveries in hand finish before leaving the rest queued (see unwind). */
const STOP_DELIVERY_GRACE_MS = 3000;

/** Options of startBridge beyond the config. */
export interface StartBridgeOptions {
  /** In-process worker slots; false when only `phasebridge worker` processes run jobs. */
  worker?: { concurrency: number } | false;
  /** Minimum time between edits of one status message (default 1000 ms). */
  editIntervalMs?: number;
  /** How often other processes' commits are looked for (default 50 ms). */
  feedPollMs?: number;
  /** Intervals of the hand-edit (500 ms) and lost-job (10 s) checks. */
  supervise?: { intervalMs?: number; leaseCheckMs?: number };
  /** When bridge.db is pruned (default: 10 s after start, then every 6 h). */
  prune?: PruneSchedule;
  /** Set when this bridge won the leader lease; unset: the only bridge of its database. */
  leadership?: Leadership;
  /** Times each step at debug level (a takeover passes the one started at its lease). */
  clock?: StartClock;
  /** What a standby opened while it waited (bridge-prep.ts); the bridge owns it from here. */
  prepared?: PreparedBridge;
}

/** A started bridge: where to reach it, and how to stop it. */
export interface RunningBridge {
  /** Base URL of the HTTP server (web console, /healthz, /readyz, /metrics). */
  url: string;
  /** One-time console login link (like Jupyter's token URL). */
  loginUrl: string;
  /** One-time pairing code for `pair <code>` in a chat (valid 10 minutes). */
  pairingCode: string;
  /** One-tap links that pair with `pairingCode`, by platform (Telegram's t.me deep link). */
  pairingLinks: Partial<Record<Platform, string>>;
  /** Where runs started from the console or by pairing work. */
  workspace: string;
  orchestrator: Orchestrator;
  repos: Repositories;
  /** The job queue the orchestrator and the console's queue page use. */
  queue: JobQueue;
  readiness: Readiness;
  /**
   * Another bridge leads now (`why`): takes no new job, declines every later update, lets those
   * being applied settle (a bound), then releases every run lock at once, so the new leader's commits do not
   * wait for this bridge's stop. Call `stop` after it.
   */
  relinquish(why: string): Promise<void>;
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
  const clock = opts.clock ?? startClock(log, 'bridge start');
  const prepared = opts.prepared;
  if (prepared) {
    // The bridge owns what the standby prepared: closed on any failure below, and on its stop.
    stack.push(() => prepared.db.close());
    if (prepared.queue) stack.push(() => prepared.queue!.close());
  }
  let stopDeliveries = async (): Promise<void> => {};
  const unwind = async () => {
    // Deliveries in hand get a moment; then what waits for a platform's limits (a busy group: a
    // minute, a 429: its retry_after) stays queued for the next start instead of holding the stop.
    const grace = setTimeout(() => {
      stopDeliveries().catch((err: unknown) => log.error({ err }, 'bridge: outbox not stopped'));
    }, STOP_DELIVERY_GRACE_MS);
    try {
      for (const stop of stack.reverse()) {
        await stop().catch((err: unknown) => log.error({ err }, 'bridge: error while stopping'));
      }
    } finally {
      clearTimeout(grace);
    }
  };
  try {
    // One home, one bridge: refused before anything is opened or migrated.
    const other = await probeBridge(controlSocketPath(config.home));
    if (other !== null) {
      throw new ConflictError(
        `a bridge already runs on ${config.home} (pid ${other.pid}, since ${other.startedAt}); stop it first, or give this one another PHASEBRIDGE_HOME`,
      );
    }
    clock.mark('other bridge probed');
    // Postgres without Redis would leave the job queue in SQLite: refused before anything opens.
    refusePostgresWithoutRedis(config);
    const db = prepared?.db ?? (await openBridgeDb(config, log, opts.leadership !== undefined));
    if (!prepared) stack.push(() => db.close());
    clock.mark('bridge.db opened, migrations checked');
    const lead = opts.leadership;
    // A newer leader took over between our lease and now: this one must not start leading.
    if (lead && !(await claimFence(db.kysely, lead.token, lead.holder))) {
      throw new FencedError(lead.token, await currentFence(db.kysely));
    }
    clock.mark('fence claimed');
    if (db.dialect === 'sqlite') {
      // WAL checkpointing is SQLite's own; Postgres manages its log itself.
      const checkpoints = await startBackgroundCheckpoints(db, log);
      stack.push(() => checkpoints.close());
    }
    const repos = createRepositories(db);
    const workspace = config.workspace;
    makeDirs(workspace);

    let opened = prepared?.queue;
    if (opened) {
      // Opened by the standby: outcomes count from the takeover, as for a queue opened now.
      await opened.outcomesFromNow?.();
    } else {
      opened = await openBridgeQueue(config, db, log, lead?.redisCommandTimeoutMs);
      const own = opened;
      stack.push(() => own.close());
    }
    const queue = opened;
    clock.mark('queue connected');
    const orchestrator = await Orchestrator.create({
      db,
      queue,
      log: log.child({ component: 'orchestrator' }),
      home: config.home,
      workspaceMode: config.workspaceMode,
      coordinatorOnComplete: config.coordinatorOnComplete,
      endSessionsOnClose: true,
      secretEnvNames: SECRET_ENV_NAMES,
      agentNice: config.agentNice,
      worker: opts.worker ?? { concurrency: 2 },
      ...(opts.leadership?.leaseFresh && { takesJobs: opts.leadership.leaseFresh }),
      feed: opts.feedPollMs === undefined ? {} : { pollMs: opts.feedPollMs },
      supervise: opts.supervise ?? {},
    });
    stack.push(() => orchestrator.close());
    clock.mark('orchestrator created (reconciled)');

    const watch = queue.listWorkers ? new WorkerWatch(() => queue.listWorkers!(), log) : null;
    if (watch) {
      await watch.start();
      stack.push(async () => watch.stop());
    }
    clock.mark('worker watch started');
    const metrics = bridgeMetrics(log, db, queue, watch, lead);
    const offDecisions = orchestrator.onUpdate((u) => recordDecisions(metrics, u));
    let outboxes: readonly Outbox[] = []; // set below, once the channels are wrapped
    stack.push(async () => offDecisions());
    const channels = await buildChannels(
      config,
      log,
      orchestratorRunsSource(orchestrator, namedRunsIndex(repos.runs, repos.people)),
      (p) => (outcome) => {
        metrics.platformCall(p, outcome);
        // A 429 the adapter waits out itself: the outbox's lanes in flight stop bursting a while.
        if (outcome === 'rate_limited')
          for (const o of outboxes) if (o.platform === p) o.rateLimitSeen();
      },
      {
        consoleAuth: repos.consoleAuth,
        state: (p) => repos.channelState.scope(p),
        consoleAdmin: consoleAdmin(repos),
        consoleQueue: consoleQueue(queue, repos),
        ...(lead && { leading: true }),
      },
    );
    await bindConsole(repos, workspace);
    clock.mark('channels built, console bound');
    // Sends and edits to the chat platforms are rows in bridge.db before they are attempted.
    const outboxStore = await outboxStoreOf(
      db,
      Date.now,
      (err) => log.warn({ err }, 'outbox: a delivered message id could not be written back'),
      lead?.token,
    );
    stack.push(async () => outboxStore.close());
    // Set once chatops exists: a row the platform refuses goes through its refusals.
    let refusalTarget: RefusalTarget | undefined;
    const paced = withOutboxes(channels.all, outboxStore, {
      log: log.child({ component: 'outbox' }),
      onFailure: outboxRefusals(() => refusalTarget, log.child({ component: 'outbox' })),
      // A checkpoint or offer copy learnt its message id (maybe queued before a crash): decided since?
      onConfirmed: (owner) => {
        if (owner.kind === 'checkpoint' || owner.kind === 'offer') {
          refusalTarget?.chatops.showDecisions();
        }
      },
      // A resend's earlier copy, found and buttonless: chatops says what it was.
      onRepeats: (owner, refs) => refusalTarget?.chatops.repeatsFound(owner, refs),
    });
    outboxes = paced.outboxes;
    stopDeliveries = async () => {
      await Promise.all(paced.outboxes.map((o) => o.stop()));
    };
    // Stopped after chatops (unwinding runs backwards), so its last edits are still delivered.
    stack.push(() => stopDeliveries());
    const chatops = new ChatOps({
      orchestrator,
      repos,
      channels: paced.channels,
      log: log.child({ component: 'chatops' }),
      defaultWorkspace: workspace,
      ...(config.publicUrl !== undefined ? { consoleUrl: config.publicUrl } : {}),
      inputLimits: config.inputs,
      ...(opts.editIntervalMs !== undefined ? { editIntervalMs: opts.editIntervalMs } : {}),
    });
    refusalTarget = { chatops, channels: paced.channels };
    await chatops.start({ catchUp: false });
    clock.mark('outbox and chatops started');
    stack.push(() => chatops.stop());

    const readiness = new Readiness(log.child({ component: 'readiness' }));
    readiness.add('bridge.db', () => bridgeDbAnswers(db));
    readiness.add('queue', async () => (await queue.get('probe:probe:0')) === null);
    // Chats that refuse us do not make the bridge unready (the others are served): a note.
    readiness.add('chats', async () => unreachableNote(await repos.unreachable.list()));
    if (lead) {
      readiness.add('leader', async () => ({
        ready: true,
        detail: `leader ${lead.holder} (fencing token ${lead.token})`,
      }));
    }
    const server = await HttpServer.start({
      host: config.host,
      port: config.port,
      // The public URL's host is served too (a reverse proxy forwards it); others get 421.
      allowedHosts: config.publicUrl === undefined ? [] : [new URL(config.publicUrl).hostname],
      forwardedByStandby: (req) => isForwardedWith(req, lead?.forwardKey),
      log: log.child({ component: 'http' }),
      routes: [
        ...healthRoutes(readiness, lead ? () => 'leader' : undefined),
        {
          prefix: '/metrics',
          // Open only when asked for and on loopback (config refuses it elsewhere).
          handler:
            config.metricsOpen === 'loopback' && isLoopbackHost(config.host)
              ? metrics.handler()
              : bearerOr(config.metricsToken, (h) => channels.web.protect(h), metrics.handler()),
        },
        ...channels.routes,
        channels.web.route,
      ],
    });
    stack.push(() => server.close());
    clock.mark('http server up (/readyz says leader)');

    // An adapter whose platform does not answer retries in the background; /readyz names it.
    const inbound = lead && new FencedInbound(chatops.handle, db.kysely, lead);
    const adapters = new AdapterSupervisor({
      handler: inbound ? inbound.handler : chatops.handle,
      log,
      secrets: secretsOf(config),
    });
    stack.push(() => adapters.stop());
    await adapters.start(paced.channels, readiness);
    channels.web.setChatStates(() => adapters.status());
    clock.mark('adapters started');
    if (watch) {
      channels.web.setWorkerStates(() =>
        watch.latest.map((w) => ({ name: `${w.host}/${w.pid}`, detail: describeWorker(w) })),
      );
    }
    // With the adapters up, what the chats missed while no bridge ran is replayed to them, in
    // the background: its sends wait for the platforms' limits (a busy group: a minute), and
    // start-up (the banner, the pairing code, the control socket) must not wait for them.
    const caughtUp = chatops
      .catchUp()
      .catch((err: unknown) => log.error({ err }, 'bridge: catch-up failed'));
    stack.push(() => caughtUp);
    // The feed replays commits the chats have not seen yet, each waiting for its messages'
    // delivery: in the background too, so start-up never waits on the outbox.
    const fed = orchestrator
      .startFeed()
      .catch((err: unknown) => log.error({ err }, 'bridge: the run feed did not start'));
    stack.push(() => fed);
    // From here on `phasebridge approve|run|…` hand their commands to this bridge.
    const control = await startControlServer({
      home: config.home,
      orchestrator,
      log: log.child({ component: 'control' }),
      tools: { awaitDecision: (id, signal) => chatops.awaitToolDecision(id, signal) },
    });
    stack.push(() => control.close());
    clock.mark('control socket up');
    stack.push(schedulePrune(db, config, log.child({ component: 'retention' }), opts.prune));

    const pairingCode = await createPairingCode(repos);
    const pairingLinks: Partial<Record<Platform, string>> = {};
    for (const [platform, channel] of paced.channels) {
      const link = channel.pairingLink?.(pairingCode);
      if (link) pairingLinks[platform] = link;
    }
    clock.mark('pairing code made');
    return {
      url: server.url,
      loginUrl: await channels.web.loginUrl(server.url),
      pairingCode,
      pairingLinks,
      workspace,
      orchestrator,
      repos,
      queue,
      readiness,
      relinquish: async (why) => {
        // Jobs first: the new leader may queue the next step any moment, for its own workers.
        orchestrator.takeNoMoreJobs();
        if (inbound && !(await inbound.stopTaking(why, RELINQUISH_SETTLE_MS)))
          log.warn('no longer the leader: updates in hand did not settle in time');
        await orchestrator.relinquishRuns(why);
        log.info('no longer the leader: every run lock released for the new leader');
      },
      stop: unwind,
    };
  } catch (err) {
    await unwind();
    throw err;
  }
}

/** The `/readyz` note naming chats that refuse us, or plain ready when none does. */
function unreachableNote(chats: readonly UnreachableChat[]): true | ReadyWithNote {
  if (chats.length === 0) return true;
  const list = chats.map((c) => `${c.chatRef} (${c.reason})`).join(', ');
  return { ready: true, detail: `${chats.length} unreachable: ${list}` };
}

/** The console chat is served from the start: bound to the workspace, its user the local admin. */
async function bindConsole(repos: Repositories, workspace: string): Promise<void> {
  const existing = await repos.bindings.find(CONSOLE_CHAT_REF, null);
  const binding = existing ?? (await repos.bindings.bind({ chatRef: CONSOLE_CHAT_REF, workspace }));
  await repos.allowlist.allow({ bindingId: binding.id }, WEB_ADMIN.platform, WEB_ADMIN.id, 'admin');
}
