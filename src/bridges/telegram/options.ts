/**
 * Options of the Telegram channel and their validation. Plain values: the caller reads config and
 * env; nothing here imports global configuration.
 */
import type { ConfigProblem } from '../../errors.ts';
import type { ApiCallObserver, ChannelLogger } from '../channel.ts';
import type { RetryPolicy } from '../delivery.ts';
import type { ChannelStateStore } from '../state.ts';

/** A bot command shown in Telegram's command menu. */
export interface TelegramCommandSpec {
  readonly command: string;
  readonly description: string;
}

/** Options of `TelegramChannel`. */
export interface TelegramChannelOptions {
  readonly token: string;
  /** Bot API server root without trailing slash (self-hosted server or a test fake). */
  readonly apiRoot?: string;
  /** Webhook mode: Telegram POSTs updates to `url`, which must reach `handleWebhook`. */
  readonly webhook?: { readonly url: string; readonly secret: string };
  /** Registered with setMyCommands on start. */
  readonly commands: readonly TelegramCommandSpec[];
  readonly logger?: ChannelLogger;
  /** Told the outcome of every API call (for metrics). */
  readonly onApiCall?: ApiCallObserver;
  readonly retry?: RetryPolicy;
  /** Where applied update ids are kept, so a redelivered update is applied once (bridge.db's `channel_state`); default memory. */
  readonly state?: ChannelStateStore;
  /** Long-polling hold time; default 30 s. */
  readonly pollingTimeoutSeconds?: number;
  /**
   * Set: a poll ended by 409 (another process polled the token) is retried after this pause
   * instead of ending polling. For a leader under a lease, where the other poller is a former
   * leader that polled once more before it learned it does not lead. Unset: another bot
   * instance on the token is not fought; polling ends with a fault /readyz shows.
   */
  readonly pollConflictRetryMs?: number;
  /**
   * Longest wait for any one Bot API answer; default the polling hold + 15 s. grammY's own is
   * 500 s: a server that takes a request and goes silent would stall start-up or polling that long.
   */
  readonly requestTimeoutSeconds?: number;
}

/** The request timeout in effect: the option, else the polling hold plus a margin. */
export function requestTimeoutSeconds(o: TelegramChannelOptions): number {
  return o.requestTimeoutSeconds ?? (o.pollingTimeoutSeconds ?? 30) + 15;
}

const TOKEN = /^\d+:[A-Za-z0-9_-]+$/;
const SECRET = /^[A-Za-z0-9_-]{1,256}$/;
const COMMAND = /^[a-z0-9_]{1,32}$/;

/** Every problem in the options (empty when valid). */
export function validateTelegramOptions(o: TelegramChannelOptions): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const add = (path: string, problem: string, fix: string) => problems.push({ path, problem, fix });
  if (!TOKEN.test(o.token ?? '')) {
    add('telegram.token', 'missing or not a bot token', 'set the token @BotFather gave you');
  }
  if (o.apiRoot !== undefined && !/^https?:\/\/[^/]/.test(o.apiRoot)) {
    add('telegram.apiRoot', 'not an http(s) URL', 'use e.g. http://127.0.0.1:8081');
  }
  if (o.webhook !== undefined) {
    if (!SECRET.test(o.webhook.secret ?? '')) {
      add(
        'telegram.webhook.secret',
        'webhook mode needs a secret of 1-256 characters A-Z a-z 0-9 _ -',
        'set a random secret, e.g. `openssl rand -hex 32`',
      );
    }
    if (!isWebhookUrl(o.webhook.url, o.apiRoot !== undefined)) {
      add('telegram.webhook.url', 'not a usable webhook URL', 'use a public https:// URL');
    }
  }
  if (o.webhook === undefined && requestTimeoutSeconds(o) <= (o.pollingTimeoutSeconds ?? 30)) {
    add(
      'telegram.requestTimeoutSeconds',
      'not longer than the long-polling hold: every getUpdates would time out',
      'leave it unset, or make it a few seconds longer than pollingTimeoutSeconds',
    );
  }
  for (const [i, c] of o.commands.entries()) {
    if (!COMMAND.test(c.command) || c.description.length < 1 || c.description.length > 256) {
      add(
        `telegram.commands[${i}]`,
        `invalid command ${JSON.stringify(c.command)}`,
        '1-32 of a-z 0-9 _, description 1-256 characters',
      );
    }
  }
  return problems;
}

/** Telegram's cloud only delivers to https; a self-hosted Bot API server may use http. */
function isWebhookUrl(url: string, selfHosted: boolean): boolean {
  try {
    const { protocol } = new URL(url);
    return protocol === 'https:' || (selfHosted && protocol === 'http:');
  } catch {
    return false;
  }
}
