/**
 * Which chat adapters run: the web console always; Telegram, Slack and Discord when their token
 * is configured. Each adapter is built from the frozen config; SDK types stay in their folders.
 * An adapter's module (and its SDK: grammy, @slack/bolt, discord.js) is imported only when its
 * token is set, so a console-only bridge does not pay for loading them at start-up.
 */
import type { ApiCallObserver, Channel, Platform } from '../bridges/channel.ts';
import type { ChannelStateStore } from '../bridges/state.ts';
import {
  type AdminSource,
  type ConsoleAuthStore,
  type QueueSource,
  type RunsSource,
  WebChannel,
} from '../bridges/web/index.ts';
import { USAGE, VERBS } from '../chatops/grammar.ts';
import type { Config } from '../config.ts';
import type { Route } from '../http/server.ts';
import type { Log } from '../log.ts';
import { consoleExposure } from './public-url.ts';

/** The adapters of one bridge process and the HTTP routes some of them need. */
export interface BridgeChannels {
  web: WebChannel;
  all: Map<Platform, Channel>;
  routes: Route[];
}

/** What adapters keep across a restart: bridge.db's console logins and per-platform state. */
export interface ChannelStores {
  readonly consoleAuth: ConsoleAuthStore;
  readonly state: (platform: Platform) => ChannelStateStore;
  /** The console's Access and Audit pages (bridge.db's bindings, roles and audit log). */
  readonly consoleAdmin?: AdminSource;
  /** The console's queue page (the job queue and the audit log). */
  readonly consoleQueue?: QueueSource;
  /**
   * This bridge leads under a lease (several `serve`): a Telegram poll ended by 409 came from a
   * former leader polling once more before it learned it does not lead, so polling goes on.
   */
  readonly leading?: boolean;
}

/** A leader's pause before polling again after a former leader's poll ended its own (409). */
const POLL_CONFLICT_RETRY_MS = 1000;

/**
 * Builds every adapter the config enables (constructors validate their own options). `runs` is
 * what the console's runs pages read; without it they answer "Runs unavailable". Without
 * `stores`, the console and Discord keep their state in memory (lost on a restart).
 */
export async function buildChannels(
  config: Config,
  log: Log,
  runs?: RunsSource,
  observe: (platform: Platform) => ApiCallObserver | undefined = () => undefined,
  stores?: ChannelStores,
): Promise<BridgeChannels> {
  // Each adapter reports every API call's outcome (metrics: calls and 429s by platform).
  const metered = (platform: Platform) => {
    const onApiCall = observe(platform);
    return onApiCall ? { onApiCall } : {};
  };
  const web = new WebChannel({
    logger: log.child({ component: 'web' }),
    ...consoleExposure(config),
    ...(runs && { runs }),
    ...(stores && { auth: stores.consoleAuth, state: stores.state('web') }),
    ...(stores?.consoleAdmin && { admin: stores.consoleAdmin }),
    ...(stores?.consoleQueue && { queue: stores.consoleQueue }),
    inputLimits: config.inputs,
  });
  const all = new Map<Platform, Channel>([['web', web]]);
  const routes: Route[] = [];

  const tg = config.telegram;
  if (tg.botToken) {
    const { TelegramChannel } = await import('../bridges/telegram/index.ts');
    const webhook =
      tg.webhookUrl && tg.webhookSecret
        ? { url: tg.webhookUrl, secret: tg.webhookSecret }
        : undefined;
    const telegram = new TelegramChannel({
      token: tg.botToken,
      ...(tg.apiRoot ? { apiRoot: tg.apiRoot.replace(/\/$/, '') } : {}),
      ...(webhook ? { webhook } : {}),
      commands: VERBS.map((v) => ({ command: v, description: USAGE[v].about.slice(0, 256) })),
      logger: log.child({ component: 'telegram' }),
      ...metered('telegram'),
      ...(stores && { state: stores.state('telegram') }),
      ...(stores?.leading && { pollConflictRetryMs: POLL_CONFLICT_RETRY_MS }),
    });
    all.set('telegram', telegram);
    if (webhook) {
      routes.push({
        prefix: new URL(webhook.url).pathname,
        handler: (q, s) => telegram.handleWebhook(q, s),
      });
    }
  }

  const sl = config.slack;
  if (sl.botToken) {
    const { SlackChannel } = await import('../bridges/slack/index.ts');
    const slack = new SlackChannel({
      botToken: sl.botToken,
      command: sl.command,
      logger: log.child({ component: 'slack' }),
      ...metered('slack'),
      ...(sl.signingSecret ? { signingSecret: sl.signingSecret } : {}),
      ...(sl.appToken ? { appToken: sl.appToken } : {}),
      ...(sl.apiUrl ? { apiUrl: sl.apiUrl } : {}),
      ...(stores && { state: stores.state('slack') }),
    });
    all.set('slack', slack);
    if (slack.mode === 'http')
      routes.push({ prefix: '/slack/', handler: (q, s) => slack.handleRequest(q, s) });
  } else if (sl.signingSecret && !sl.appToken) {
    // The order that works: Slack checks the request URL before the app (and its token) is installed.
    const { slackUrlVerificationHandler } = await import('../bridges/slack/url-verification.ts');
    const handler = slackUrlVerificationHandler({
      signingSecret: sl.signingSecret,
      log: log.child({ component: 'slack' }),
    });
    routes.push({ prefix: '/slack/', handler });
    log.info(
      'slack: only SLACK_SIGNING_SECRET is set: answering the request URL check under /slack/',
    );
  }

  const dc = config.discord;
  if (dc.botToken) {
    const { DiscordChannel } = await import('../bridges/discord/index.ts');
    const discord = new DiscordChannel({
      token: dc.botToken,
      logger: log.child({ component: 'discord' }),
      ...metered('discord'),
      ...(dc.apiUrl ? { apiUrl: dc.apiUrl } : {}),
      ...(stores && { state: stores.state('discord') }),
    });
    all.set('discord', discord);
  }

  return { web, all, routes };
}

/**
 * Loads the modules (and SDKs) of the adapters `config` enables without building any: a standby
 * pays for them while it waits, so a takeover only constructs the adapters (serve-ha.ts).
 */
export async function loadChannelModules(config: Config): Promise<void> {
  await Promise.all([
    config.telegram.botToken && import('../bridges/telegram/index.ts'),
    config.slack.botToken && import('../bridges/slack/index.ts'),
    config.discord.botToken && import('../bridges/discord/index.ts'),
  ]);
}
