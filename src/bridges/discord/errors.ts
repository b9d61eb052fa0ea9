/**
 * Translation of discord.js errors into phasebridge errors, done once here so nothing outside this
 * folder sees a DiscordAPIError. Messages never carry a URL: interaction and webhook URLs hold
 * tokens.
 */
import { DiscordAPIError, DiscordjsError, HTTPError, RateLimitError } from 'discord.js';
import {
  ChatUnreachableError,
  NotFoundError,
  PhasebridgeError,
  PlatformError,
  RateLimitedError,
} from '../../errors.ts';

const PLATFORM = 'discord';

/** The request's path with interaction and webhook tokens replaced, safe to log. */
export function redactedPath(url: string): string {
  let path: string;
  try {
    path = new URL(url).pathname;
  } catch {
    path = url;
  }
  return path
    .replace(/^\/api\/v\d+/, '')
    .replace(/\/(interactions|webhooks)\/(\d+)\/[^/]+/, '/$1/$2/:token');
}

/** Discord's error code of a message that does not exist (deleted in the chat). */
const UNKNOWN_MESSAGE = 10008;

/**
 * Discord's codes for a channel that refuses the bot until an admin acts, with our reason; a
 * `thread` one refuses only the thread (archived), its channel still takes messages.
 */
const REFUSALS: Readonly<Record<number, { reason: string; scope: 'chat' | 'thread' }>> = {
  10003: { reason: 'channel_not_found', scope: 'chat' },
  50001: { reason: 'missing_access', scope: 'chat' },
  50013: { reason: 'missing_permissions', scope: 'chat' },
  50083: { reason: 'thread_archived', scope: 'thread' },
};

/**
 * Discord's answers when an interaction can no longer be answered through its token: 10062
 * Unknown interaction (the 3 s for the initial response passed), 50027 Invalid Webhook Token
 * (401: the token's 15 minutes passed), 10015 Unknown Webhook. The chat still takes messages.
 */
const LOST_INTERACTION = new Set([10062, 10015, 50027]);

/** True when `err` (from discord.js) says the interaction's token no longer works. */
export function isLostInteraction(err: unknown): boolean {
  if (!(err instanceof DiscordAPIError)) return false;
  if (typeof err.code === 'number' && LOST_INTERACTION.has(err.code)) return true;
  return err.status === 401 && /\/(interactions|webhooks)\//.test(err.url);
}

/**
 * Maps anything thrown by discord.js to RateLimitedError (429 beyond our wait), ChatUnreachableError
 * (Missing Access, Missing Permissions, Unknown Channel, archived thread), NotFoundError (Unknown
 * Message) or PlatformError.
 * discord.js' HTTP errors are not kept as `cause`: their `url` holds interaction tokens and log
 * serialisers print every property.
 */
export function toDiscordError(err: unknown): PhasebridgeError {
  if (err instanceof PhasebridgeError) return err;
  if (err instanceof RateLimitError) {
    return new RateLimitedError(PLATFORM, Math.max(err.retryAfter, err.sublimitTimeout, 0));
  }
  if (err instanceof DiscordAPIError) {
    const what = `${err.method.toUpperCase()} ${redactedPath(err.url)}`;
    const failed = `${what} failed (${err.status}/${err.code}: ${err.message})`;
    if (err.code === UNKNOWN_MESSAGE) return new NotFoundError(`${PLATFORM}: ${failed}`);
    const refusal = typeof err.code === 'number' ? REFUSALS[err.code] : undefined;
    if (refusal) {
      return new ChatUnreachableError(PLATFORM, refusal.reason, {
        scope: refusal.scope,
        detail: failed,
      });
    }
    return new PlatformError(PLATFORM, failed);
  }
  if (err instanceof HTTPError) {
    const what = `${err.method.toUpperCase()} ${redactedPath(err.url)}`;
    return new PlatformError(PLATFORM, `${what} failed (${err.status})`);
  }
  if (err instanceof DiscordjsError) {
    return new PlatformError(PLATFORM, `${err.code}: ${err.message}`, { cause: err });
  }
  const message = err instanceof Error ? err.message : String(err);
  return new PlatformError(PLATFORM, message, { cause: err });
}

/** Runs one discord.js call, translating what it throws (the one place callers need). */
export async function discordCall<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    throw toDiscordError(err);
  }
}
