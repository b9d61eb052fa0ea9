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

/**
 * Slack's codes for a message we may no longer edit: deleted, not ours, or past the workspace's
 * edit window. All are NOT_FOUND, on which chatops posts a new message and edits that one after.
 */
const GONE_MESSAGES = new Set(['message_not_found', 'cant_update_message', 'edit_window_closed']);

/** Slack's codes for a trigger_id that can no longer open a modal (older than 3 s, or spent). */
const SPENT_TRIGGERS = new Set(['expired_trigger_id', 'invalid_trigger_id']);

/** Slack's codes for a message longer than it takes (its `text`, or its blocks in total). */
const TOO_LONG = new Set(['msg_too_long', 'msg_blocks_too_long']);

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
 * ChatUnreachableError (the channel refuses the bot: removed, archived, gone), NotFoundError (a
 * message deleted, not ours, or past the edit window) or PlatformError naming the method and
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
      if (GONE_MESSAGES.has(code)) {
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

/** True when a views.open failed because its trigger_id expired (3 s) or was already used. */
export function isSpentTrigger(err: PhasebridgeError): boolean {
  return SPENT_TRIGGERS.has(slackErrorCode(err) ?? '');
}

/** True when Slack refused a message as too long (`msg_too_long`, `msg_blocks_too_long`). */
export function isTooLong(err: PhasebridgeError): boolean {
  return TOO_LONG.has(slackErrorCode(err) ?? '');
}

/** What a failed post to a response_url leaves in the error's cause. */
interface ResponseUrlFailure {
  readonly responseUrlStatus: number;
  readonly responseUrlError: string | undefined;
}

/**
 * The error of a post to a response_url answered with `status`: RATE_LIMITED on 429, else a
 * PlatformError naming Slack's error (`expired_url` once the url is 30 minutes old or used 5 times).
 */
export function responseUrlError(
  status: number,
  body: string,
  retryAfter: string | null,
): PhasebridgeError {
  if (status === 429) {
    const seconds = Number(retryAfter ?? '1');
    return new RateLimitedError(PLATFORM, (Number.isFinite(seconds) ? seconds : 1) * 1000);
  }
  let error: string | undefined;
  try {
    const parsed: unknown = JSON.parse(body);
    const e = (parsed as { error?: unknown } | null)?.error;
    error = typeof e === 'string' ? e : undefined;
  } catch {
    error = /^[a-z_]{1,40}$/.test(body.trim()) ? body.trim() : undefined;
  }
  const cause: ResponseUrlFailure = { responseUrlStatus: status, responseUrlError: error };
  return new PlatformError(
    PLATFORM,
    `response_url failed: HTTP ${status}${error === undefined ? '' : ` ${error}`}`,
    { cause },
  );
}

/** True when a response_url can take no more posts (expired, used up, or unknown to Slack). */
export function isSpentResponseUrl(err: unknown): boolean {
  if (!(err instanceof PhasebridgeError)) return false;
  const cause = err.cause as Partial<ResponseUrlFailure> | undefined;
  return (
    cause?.responseUrlStatus === 404 ||
    cause?.responseUrlError === 'expired_url' ||
    cause?.responseUrlError === 'used_url'
  );
}
