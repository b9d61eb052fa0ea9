/**
 * Translation of @slack/web-api and Bolt errors into phasebridge errors, done once here so nothing
 * outside this folder sees a Slack SDK error. Matching is on the SDK's documented string `code`s
 * rather than `instanceof`, which breaks when two copies of the SDK are loaded.
 */
import {
  ChatUnreachableError,
  NotFoundError,
  PhasebridgeError,
  PlatformError,
  RateLimitedError,
} from '../../errors.ts';

const PLATFORM = 'slack';

/**
 * Slack's codes for a channel that refuses the bot until a person acts (invite it, unarchive the
 * channel). `user_not_in_channel` is about one person, not the channel: it stays a PlatformError.
 */
const CHANNEL_REFUSALS = new Set(['channel_not_found', 'not_in_channel', 'is_archived']);

/** The fields of a Slack SDK error this module reads. */
interface SlackSdkError {
  readonly code?: unknown;
  readonly retryAfter?: unknown;
  readonly data?: { readonly error?: unknown };
  readonly statusCode?: unknown;
  readonly original?: unknown;
  readonly message?: unknown;
}

const messageOf = (err: unknown): string =>
  err instanceof Error ? err.message : typeof err === 'string' ? err : 'unknown error';

/**
 * Maps anything thrown by a Slack call to RateLimitedError (HTTP 429, Retry-After in ms),
 * ChatUnreachableError (the channel refuses the bot: removed, archived, gone), NotFoundError (`message_not_found`: deleted in the chat) or PlatformError naming the method and
 * Slack's error code (`channel_not_found`, `invalid_auth`…).
 */
export function toSlackError(err: unknown, method?: string): PhasebridgeError {
  if (err instanceof PhasebridgeError) return err;
  const e = (typeof err === 'object' && err !== null ? err : {}) as SlackSdkError;
  const what = method ?? 'call';
  switch (e.code) {
    case 'slack_webapi_rate_limited_error': {
      const seconds = typeof e.retryAfter === 'number' ? e.retryAfter : 1;
      return new RateLimitedError(PLATFORM, Math.max(0, seconds) * 1000, { cause: err });
    }
    case 'slack_webapi_platform_error': {
      const code = String(e.data?.error ?? 'error');
      if (code === 'message_not_found') {
        return new NotFoundError(`${PLATFORM}: ${what} failed: ${code}`);
      }
      if (CHANNEL_REFUSALS.has(code)) {
        return new ChatUnreachableError(PLATFORM, code, { detail: `${what} failed`, cause: err });
      }
      return new PlatformError(PLATFORM, `${what} failed: ${code}`, { cause: err });
    }
    case 'slack_webapi_http_error':
      return new PlatformError(PLATFORM, `${what} failed: HTTP ${String(e.statusCode)}`, {
        cause: err,
      });
    case 'slack_webapi_request_error':
      return new PlatformError(
        PLATFORM,
        `${what} failed: network error: ${messageOf(e.original)}`,
        {
          cause: err,
        },
      );
    default:
      return new PlatformError(PLATFORM, `${what} failed: ${messageOf(err)}`, { cause: err });
  }
}

/** Slack's error code (`not_in_channel`…) when `err` came from an `ok: false` answer. */
export function slackErrorCode(err: PhasebridgeError): string | undefined {
  const cause = err.cause as SlackSdkError | undefined;
  if (cause?.code !== 'slack_webapi_platform_error') return undefined;
  return typeof cause.data?.error === 'string' ? cause.data.error : undefined;
}
