import type { Config } from '../config.ts';
import { migrationStatus, openBridgeDb } from '../db/connection.ts';

/** One line of `phasebridge doctor`: what was checked, whether it passed, and the fix when not. */
export interface CheckResult {
  name: string;
  ok: boolean;
  detail: string;
  fix?: string;
}

const TIMEOUT_MS = 5000;

/** Checks bridge.db: it opens, and every migration this version knows is applied. */
export async function checkDatabase(file: string): Promise<CheckResult> {
  try {
    const db = openBridgeDb({ file });
    try {
      const status = await migrationStatus(db);
      const unknown = status.filter((m) => m.unknown).map((m) => m.name);
      if (unknown.length > 0) {
        return {
          name: 'bridge.db',
          ok: false,
          detail: `written by a newer phasebridge (unknown migration(s): ${unknown.join(', ')})`,
          fix: 'upgrade phasebridge, or point PHASEBRIDGE_HOME at another folder',
        };
      }
      const pending = status.filter((m) => !m.appliedAt).map((m) => m.name);
      if (pending.length > 0) {
        return {
          name: 'bridge.db',
          ok: false,
          detail: `${pending.length} migration(s) pending: ${pending.join(', ')}`,
          fix: 'run `phasebridge migrate`',
        };
      }
      return {
        name: 'bridge.db',
        ok: true,
        detail: `${file}, ${status.length} migration(s) applied`,
      };
    } finally {
      await db.close();
    }
  } catch (err) {
    return {
      name: 'bridge.db',
      ok: false,
      detail: (err as Error).message,
      fix: 'check PHASEBRIDGE_HOME is writable, then run `phasebridge migrate`',
    };
  }
}

/** Checks Redis answers PING at REDIS_URL (only called when it is set). */
export async function checkRedis(url: string): Promise<CheckResult> {
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
    return { name: 'redis', ok: pong === 'PONG', detail: `PING answered ${pong}` };
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

/** Calls one platform API with a timeout; returns the parsed JSON body and HTTP status. */
async function callJson(
  url: string,
  init: RequestInit,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(url, { ...init, signal: AbortSignal.timeout(TIMEOUT_MS) });
  const body = (await res.json().catch(() => ({}))) as Record<string, unknown>;
  return { status: res.status, body };
}

/** Checks the Telegram token with getMe. */
export async function checkTelegram(
  token: string,
  apiRoot = 'https://api.telegram.org',
): Promise<CheckResult> {
  return platformCheck(
    'telegram',
    'check TELEGRAM_BOT_TOKEN with @BotFather (and TELEGRAM_API_ROOT if you use your own Bot API server)',
    async () => {
      const { body } = await callJson(`${apiRoot.replace(/\/$/, '')}/bot${token}/getMe`, {});
      const result = body.result as { username?: string } | undefined;
      if (body.ok !== true)
        throw new Error(`getMe refused: ${String(body.description ?? 'no description')}`);
      return `bot @${result?.username ?? '?'}`;
    },
  );
}

/** Checks the Slack bot token with auth.test. */
export async function checkSlack(
  token: string,
  apiUrl = 'https://slack.com/api/',
): Promise<CheckResult> {
  return platformCheck(
    'slack',
    'check SLACK_BOT_TOKEN (an xoxb- token of an installed app) and SLACK_API_URL',
    async () => {
      const base = apiUrl.endsWith('/') ? apiUrl : `${apiUrl}/`;
      const { body } = await callJson(`${base}auth.test`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}` },
      });
      if (body.ok !== true)
        throw new Error(`auth.test refused: ${String(body.error ?? 'unknown error')}`);
      return `team ${String(body.team ?? '?')}, bot user ${String(body.user ?? '?')}`;
    },
  );
}

/** Checks the Discord bot token with GET /users/@me. */
export async function checkDiscord(
  token: string,
  apiUrl = 'https://discord.com/api',
): Promise<CheckResult> {
  return platformCheck(
    'discord',
    'check DISCORD_BOT_TOKEN in the Developer Portal (Bot → Reset Token) and DISCORD_API_URL',
    async () => {
      const { status, body } = await callJson(`${apiUrl.replace(/\/$/, '')}/v10/users/@me`, {
        headers: { authorization: `Bot ${token}` },
      });
      if (status !== 200) throw new Error(`/users/@me answered ${status}`);
      return `bot ${String(body.username ?? '?')}`;
    },
  );
}

async function platformCheck(
  name: string,
  fix: string,
  probe: () => Promise<string>,
): Promise<CheckResult> {
  try {
    return { name, ok: true, detail: await probe() };
  } catch (err) {
    // Messages here never include the URL: Telegram puts the token in it.
    return { name, ok: false, detail: (err as Error).message, fix };
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
  results.push(await checkDatabase(dbFile));
  if (config.redisUrl) results.push(await checkRedis(config.redisUrl));
  const { telegram, slack, discord } = config;
  if (telegram.botToken) results.push(await checkTelegram(telegram.botToken, telegram.apiRoot));
  if (slack.botToken) results.push(await checkSlack(slack.botToken, slack.apiUrl));
  if (discord.botToken) results.push(await checkDiscord(discord.botToken, discord.apiUrl));
  return results;
}
