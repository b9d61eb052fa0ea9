/**
 * Options of the Slack channel and their validation. Plain values: the caller reads config and
 * env; nothing here imports global configuration.
 */
import type { ConfigProblem } from '../../errors.ts';
import type { ApiCallObserver, ChannelLogger } from '../channel.ts';
import type { RetryPolicy } from '../delivery.ts';
import type { ChannelStateStore } from '../state.ts';

/** Retries of failed network calls inside the WebClient (p-retry options; 429s are ours). */
export interface WebClientRetries {
  readonly retries: number;
  readonly factor?: number;
  readonly minTimeout?: number;
  readonly maxTimeout?: number;
}

/** Options of `SlackChannel`. Socket Mode when `appToken` is set, otherwise HTTP. */
export interface SlackChannelOptions {
  /** Bot token (`xoxb-…`) of the installed app. */
  readonly botToken: string;
  /** Verifies HTTP requests; required in HTTP mode. */
  readonly signingSecret?: string;
  /** App-level token (`xapp-…`, connections:write): selects Socket Mode. */
  readonly appToken?: string;
  /** Web API root (default https://slack.com/api/); a test fake's URL in tests. */
  readonly apiUrl?: string;
  /** The slash command registered for the app; default `/pb`. */
  readonly command?: string;
  readonly logger?: ChannelLogger;
  /** Told the outcome of every API call (for metrics). */
  readonly onApiCall?: ApiCallObserver;
  /** Waiting out 429s. */
  readonly retry?: RetryPolicy;
  /** WebClient retries of network errors and 5xx; default 3 quick retries, tests use 0. */
  readonly webClientRetries?: WebClientRetries;
  /** Clock for the request timestamp window, ms since the epoch (tests pin it). */
  readonly now?: () => number;
  /**
   * Where reasons asked in a thread (the dialog came too late) are kept across a restart
   * (bridge.db's `channel_state`); default memory.
   */
  readonly state?: ChannelStateStore;
}

/** The default slash command. */
export const DEFAULT_COMMAND = '/pb';
/** Default WebClient retries: short, so a dead network surfaces instead of stalling a queue. */
export const DEFAULT_WEB_CLIENT_RETRIES: WebClientRetries = {
  retries: 3,
  factor: 2,
  minTimeout: 500,
  maxTimeout: 5_000,
};

const COMMAND = /^\/[a-z0-9_-]{1,31}$/;

/** Every problem in the options (empty when valid). */
export function validateSlackOptions(o: SlackChannelOptions): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const add = (path: string, problem: string, fix: string) => problems.push({ path, problem, fix });
  if (!/^xoxb-\S+$/.test(o.botToken ?? '')) {
    add('slack.botToken', 'missing or not a bot token', 'set the xoxb- token of your Slack app');
  }
  if (o.appToken !== undefined && !/^xapp-\S+$/.test(o.appToken)) {
    add('slack.appToken', 'not an app-level token', 'use the xapp- token, or unset it for HTTP');
  }
  if (o.appToken === undefined && !o.signingSecret) {
    add(
      'slack.signingSecret',
      'HTTP mode needs the signing secret to verify requests',
      "set the app's signing secret (Basic Information), or an xapp- token for Socket Mode",
    );
  }
  if (o.apiUrl !== undefined && !/^https?:\/\/[^/]/.test(o.apiUrl)) {
    add('slack.apiUrl', 'not an http(s) URL', 'use e.g. https://slack.com/api/');
  }
  if (o.command !== undefined && !COMMAND.test(o.command)) {
    add('slack.command', `invalid slash command ${JSON.stringify(o.command)}`, 'use e.g. /pb');
  }
  return problems;
}
