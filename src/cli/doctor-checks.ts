import { sql } from 'kysely';
import type { Config } from '../config.ts';
import { redactedDatabaseUrl } from '../database-url.ts';
import { migrationStatus, openBridgeDb } from '../db/connection.ts';
import type { AnyBridgeDb } from '../db/migrator.ts';
import { openConfiguredDb } from '../db/open.ts';
import { AgentsRepo } from '../db/repositories/agents.ts';
import { createRepositories, type UnreachableChat } from '../db/repositories/index.ts';
import { checkRunningBridge } from './doctor-bridge.ts';
import { checkEngines } from './doctor-engines.ts';
import { checkDiscord, checkSlack, checkTelegram } from './doctor-platforms.ts';

/** One line of `phasebridge doctor`: what was checked, whether it passed, and the fix when not. */
export interface CheckResult {
  name: string;
  ok: boolean;
  detail: string;
  fix?: string;
}

const TIMEOUT_MS = 5000;

/** Opens bridge.db for one check (closed by the check). */
type Opener = () => Promise<AnyBridgeDb>;

/**
 * Oldest Postgres bridge.db runs on: migration 0001's generated column needs 12 (identity
 * columns, 10).
 */
const POSTGRES_MIN_MAJOR = 12;

/** How doctor opens bridge.db: Postgres for DATABASE_URL, else the SQLite file. */
function bridgeDbOpener(config: Pick<Config, 'home' | 'databaseUrl'>, dbFile: string): Opener {
  return config.databaseUrl
    ? () => openConfiguredDb(config)
    : async () => openBridgeDb({ file: dbFile });
}

/** Where bridge.db is, as printed (a DATABASE_URL without its password). */
function bridgeDbWhere(config: Pick<Config, 'databaseUrl'>, dbFile: string): string {
  return config.databaseUrl ? redactedDatabaseUrl(config.databaseUrl) : dbFile;
}

/** The bridge.db line of `doctor` for this config (SQLite file or Postgres). */
export function checkBridgeDb(
  config: Pick<Config, 'home' | 'databaseUrl'>,
  dbFile: string,
): Promise<CheckResult> {
  return checkDb(bridgeDbOpener(config, dbFile), bridgeDbWhere(config, dbFile));
}

/** Checks bridge.db (the SQLite file): it opens, and every migration this version knows is applied. */
export async function checkDatabase(file: string): Promise<CheckResult> {
  return checkDb(async () => openBridgeDb({ file }), file);
}

/**
 * Checks bridge.db on whichever dialect `open` gives: it opens (Postgres: is reachable, and its
 * version is new enough), and every migration this version knows is applied.
 */
async function checkDb(open: Opener, where: string): Promise<CheckResult> {
  const failed = (detail: string, fix: string): CheckResult => ({
    name: 'bridge.db',
    ok: false,
    detail,
    fix,
  });
  let db: AnyBridgeDb;
  try {
    db = await open();
  } catch (err) {
    return failed(
      (err as Error).message,
      where.startsWith('postgres')
        ? 'start Postgres or correct DATABASE_URL, then run `phasebridge migrate`'
        : 'check PHASEBRIDGE_HOME is writable, then run `phasebridge migrate`',
    );
  }
  try {
    let server = '';
    if (db.dialect === 'postgres') {
      const { rows } = await sql<{ server_version: string }>`show server_version`.execute(
        db.kysely,
      );
      const version = rows[0]?.server_version ?? '?';
      if (Number.parseInt(version, 10) < POSTGRES_MIN_MAJOR) {
        return failed(
          `${where}: Postgres ${version} is too old (${POSTGRES_MIN_MAJOR} or newer needed)`,
          `upgrade Postgres to ${POSTGRES_MIN_MAJOR} or newer`,
        );
      }
      server = `Postgres ${version}, `;
    }
    const status = await migrationStatus(db);
    const unknown = status.filter((m) => m.unknown).map((m) => m.name);
    if (unknown.length > 0) {
      return failed(
        `written by a newer phasebridge (unknown migration(s): ${unknown.join(', ')})`,
        db.dialect === 'postgres'
          ? 'upgrade phasebridge, or point DATABASE_URL at another database'
          : 'upgrade phasebridge, or point PHASEBRIDGE_HOME at another folder',
      );
    }
    const pending = status.filter((m) => !m.appliedAt).map((m) => m.name);
    if (pending.length > 0) {
      return failed(
        `${pending.length} migration(s) pending: ${pending.join(', ')}`,
        'run `phasebridge migrate`',
      );
    }
    return {
      name: 'bridge.db',
      ok: true,
      detail: `${where}, ${server}${status.length} migration(s) applied`,
    };
  } catch (err) {
    return failed(
      (err as Error).message,
      'run `phasebridge migrate`, then `phasebridge doctor` again',
    );
  } finally {
    await db.close();
  }
}

/**
 * Chats a platform refused the bridge in (bridge.db `unreachable_chats`): one failed line each,
 * with the reason and how to bring it back. Read from the file, so it works with no bridge up.
 */
export async function checkUnreachableChats(file: string | Opener): Promise<CheckResult[]> {
  let chats: UnreachableChat[];
  const open: Opener = typeof file === 'string' ? async () => openBridgeDb({ file }) : file;
  try {
    const db = await open();
    try {
      chats = await createRepositories(db).unreachable.list();
    } finally {
      await db.close();
    }
  } catch {
    return []; // bridge.db's own check above says what is wrong with it
  }
  return chats.map((c) => ({
    name: `chat ${c.chatRef}`,
    ok: false,
    detail: `unreachable since ${new Date(c.since).toISOString()}: ${c.detail}`,
    fix: 'fix it on the platform (add the bot back, restore its permission, unarchive), then send a command there as an operator or bind the chat again',
  }));
}

/** Checks Redis answers PING at REDIS_URL (only called when it is set), then lists its workers. */
export async function checkRedis(url: string): Promise<CheckResult | CheckResult[]> {
  const { Redis } = await import('ioredis'); // loaded only when REDIS_URL is set
  const redis = new Redis(url, {
    lazyConnect: true,
    connectTimeout: TIMEOUT_MS,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  redis.on('error', () => {}); // reported through the rejected connect below
  try {
    await redis.connect();
    const pong = await redis.ping();
    return [
      { name: 'redis', ok: pong === 'PONG', detail: `PING answered ${pong}` },
      await checkWorkers(redis),
    ];
  } catch (err) {
    return {
      name: 'redis',
      ok: false,
      detail: `cannot reach Redis: ${(err as Error).message}`,
      fix: 'start Redis (docker compose up redis) or unset REDIS_URL to use the embedded queue',
    };
  } finally {
    redis.disconnect();
  }
}

/** Every check that applies to this config, in the order printed. */
export async function runChecks(config: Config, dbFile: string): Promise<CheckResult[]> {
  const results: CheckResult[] = [
    {
      name: 'config',
      ok: true,
      detail: `home ${config.home}, console http://${config.host}:${config.port}`,
    },
  ];
  const open = bridgeDbOpener(config, dbFile);
  results.push(await checkDb(open, bridgeDbWhere(config, dbFile)));
  results.push(...(await checkUnreachableChats(open)));
  if (config.redisUrl) results.push(...[await checkRedis(config.redisUrl)].flat());
  const { telegram, slack, discord } = config;
  if (telegram.botToken) results.push(...(await checkTelegram(telegram)));
  if (slack.botToken) results.push(...(await checkSlack(slack)));
  if (discord.botToken) results.push(...(await checkDiscord(discord)));
  results.push(...(await checkRunningBridge(config)));
  results.push(...(await engineChecks(open)));
  return results;
}

/** The engine lines for the named agents in bridge.db ([] when it cannot be read: see above). */
async function engineChecks(open: Opener): Promise<CheckResult[]> {
  let agents: Awaited<ReturnType<AgentsRepo['list']>>;
  try {
    const db = await open();
    try {
      agents = await new AgentsRepo(db.kysely).list();
    } finally {
      await db.close();
    }
  } catch {
    return [];
  }
  return checkEngines(agents);
}

/**
 * Lists the job workers registered on Redis (heartbeat within 3 beats): host/pid, labels,
 * engines, running jobs. None is not a failure (serve's own worker registers while it runs),
 * but the fix says how to add one.
 */
async function checkWorkers(redis: import('ioredis').Redis): Promise<CheckResult> {
  const [{ listWorkers, WorkerKeys }, { describeWorker }] = await Promise.all([
    import('../jobs/queue/bullmq-workers.ts'),
    import('../app/worker-watch.ts'),
  ]);
  const workers = await listWorkers(redis, new WorkerKeys(DEFAULT_QUEUE_BASE));
  if (workers.length === 0) {
    return {
      name: 'workers',
      ok: true,
      detail: 'none registered now',
      fix: 'start `phasebridge serve` (it runs jobs too) or `phasebridge worker` on any machine with REDIS_URL',
    };
  }
  const lines = workers.map((w) => `${w.host}/${w.pid} (${describeWorker(w)})`);
  return { name: 'workers', ok: true, detail: `${workers.length}: ${lines.join(', ')}` };
}

/** `<prefix>:<queue name>` of the default BullMQ queue (what serve and workers use). */
const DEFAULT_QUEUE_BASE = 'phasebridge:phasebridge-jobs';
