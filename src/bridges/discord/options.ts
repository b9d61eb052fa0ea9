/**
 * Options of the Discord channel and their validation. Plain values: the caller reads config and
 * env; nothing here imports global configuration.
 */
import type { ConfigProblem } from '../../errors.ts';
import type { ApiCallObserver, ChannelLogger } from '../channel.ts';
import type { ChannelStateStore } from '../state.ts';
import { type SlashCommandSpec, validateCommands } from './commands.ts';

/** Options of `DiscordChannel`. */
export interface DiscordChannelOptions {
  /** The bot token (Developer Portal → Bot). */
  readonly token: string;
  /** REST root including `/api`, e.g. `https://discord.com/api` (default) or a test fake's. */
  readonly apiUrl?: string;
  /** Slash commands registered on start (default: `chatopsCommands()`). */
  readonly commands?: readonly SlashCommandSpec[];
  /** Register the commands in these guilds (instant) instead of globally (up to an hour). */
  readonly guildIds?: readonly string[];
  readonly logger?: ChannelLogger;
  /** Told the outcome of every API call (for metrics). */
  readonly onApiCall?: ApiCallObserver;
  /** A press not answered by its handler within this long is acknowledged quietly; default 2000. */
  readonly ackAfterMs?: number;
  /** A rate limit asking to wait longer than this fails with RATE_LIMITED; default 60 s. */
  readonly maxRateLimitWaitMs?: number;
  /** Where reason prompts are kept across a restart (bridge.db's `channel_state`); default memory. */
  readonly state?: ChannelStateStore;
}

const TOKEN = /^[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{3,}\.[A-Za-z0-9_-]{10,}$/;

/** Every problem in the options (empty when valid). */
export function validateDiscordOptions(o: DiscordChannelOptions): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const add = (path: string, problem: string, fix: string) => problems.push({ path, problem, fix });
  if (!TOKEN.test(o.token ?? '')) {
    add(
      'discord.token',
      'missing or not a bot token',
      'copy the token from Developer Portal → Bot',
    );
  }
  if (o.apiUrl !== undefined && !/^https?:\/\/[^/]+(\/.*)?$/.test(o.apiUrl)) {
    add('discord.apiUrl', 'not an http(s) URL', 'use e.g. https://discord.com/api');
  }
  for (const [i, g] of (o.guildIds ?? []).entries()) {
    if (!/^\d{1,20}$/.test(g))
      add(`discord.guildIds[${i}]`, 'not a guild id', 'use the numeric id');
  }
  const ack = o.ackAfterMs;
  if (ack !== undefined && !(Number.isFinite(ack) && ack >= 0 && ack <= 2500)) {
    add(
      'discord.ackAfterMs',
      'must be 0-2500 ms',
      'Discord drops interactions not answered in 3 s',
    );
  }
  if (o.commands) problems.push(...validateCommands(o.commands));
  return problems;
}
