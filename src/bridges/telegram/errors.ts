/**
 * Translation of grammY's errors into phasebridge errors, so nothing outside this folder sees a
 * GrammyError. The token is never part of a message (grammY redacts it from HttpError too).
 */
import { GrammyError, HttpError } from 'grammy';
import {
  ChatUnreachableError,
  NotFoundError,
  PhasebridgeError,
  PlatformError,
  RateLimitedError,
} from '../../errors.ts';

const PLATFORM = 'telegram';

/**
 * The Bot API's descriptions of a chat that refuses the bot until a person acts, with our short
 * reason; `thread` ones refuse only the topic (the chat itself still takes messages).
 */
const REFUSALS: readonly { match: RegExp; reason: string; scope: 'chat' | 'thread' }[] = [
  { match: /bot was kicked/, reason: 'bot_kicked', scope: 'chat' },
  { match: /bot was blocked by the user/, reason: 'bot_blocked', scope: 'chat' },
  { match: /bot is not a member/, reason: 'bot_not_member', scope: 'chat' },
  { match: /user is deactivated/, reason: 'user_deactivated', scope: 'chat' },
  { match: /not enough rights to send/, reason: 'no_rights', scope: 'chat' },
  { match: /chat not found/, reason: 'chat_not_found', scope: 'chat' },
  { match: /TOPIC_CLOSED/, reason: 'topic_closed', scope: 'thread' },
  { match: /message thread not found|TOPIC_DELETED/, reason: 'topic_deleted', scope: 'thread' },
];

function refusal(err: GrammyError): ChatUnreachableError | undefined {
  const to = err.parameters.migrate_to_chat_id;
  if (to !== undefined) {
    return new ChatUnreachableError(PLATFORM, 'chat_migrated', {
      movedTo: `telegram:${to}`,
      detail: 'the group became a supergroup',
      cause: err,
    });
  }
  if (err.error_code !== 400 && err.error_code !== 403) return undefined;
  const hit = REFUSALS.find((r) => r.match.test(err.description));
  return (
    hit &&
    new ChatUnreachableError(PLATFORM, hit.reason, {
      scope: hit.scope,
      detail: `${err.method}: ${err.description}`,
      cause: err,
    })
  );
}

/**
 * Maps anything thrown by a grammY call to RateLimitedError (429), ChatUnreachableError (the chat
 * refuses the bot, or moved), NotFoundError (the message to edit is gone: deleted in the chat) or
 * PlatformError.
 */
export function toTelegramError(err: unknown): PhasebridgeError {
  if (err instanceof PhasebridgeError) return err;
  if (err instanceof GrammyError) {
    if (err.error_code === 429) {
      const seconds = err.parameters.retry_after ?? 1;
      return new RateLimitedError(PLATFORM, Math.max(0, seconds) * 1000, { cause: err });
    }
    const refused = refusal(err);
    if (refused) return refused;
    const what = `${err.method} failed (${err.error_code}: ${err.description})`;
    if (err.error_code === 400 && err.description.includes('message to edit not found')) {
      return new NotFoundError(`${PLATFORM}: ${what}`);
    }
    return new PlatformError(PLATFORM, what, { cause: err });
  }
  if (err instanceof HttpError) {
    // grammY words its own timeout in the inner error only (no token in it): say it.
    const inner = err.error instanceof Error ? err.error.message : '';
    const timedOut = /timed out after \d+ seconds/.exec(inner)?.[0];
    const what = timedOut === undefined ? err.message : `${err.message} (${timedOut})`;
    return new PlatformError(PLATFORM, `network error: ${what}`, { cause: err });
  }
  const message = err instanceof Error ? err.message : String(err);
  return new PlatformError(PLATFORM, message, { cause: err });
}

/** True for the 400 Telegram answers when an edit would change nothing (harmless for us). */
export function isNotModified(err: PhasebridgeError): boolean {
  return (
    err.cause instanceof GrammyError &&
    err.cause.error_code === 400 &&
    err.cause.description.includes('message is not modified')
  );
}

/** True for the 400 Telegram answers once a callback query is older than about 15 s. */
export function isExpiredQuery(err: PhasebridgeError): boolean {
  return (
    err.cause instanceof GrammyError &&
    err.cause.error_code === 400 &&
    err.cause.description.includes('query is too old')
  );
}

/** What stopped long polling for good, with the fix: grammY gives up on 401 and 409 only. */
export function pollingFault(err: unknown): string {
  const code = (err as { error_code?: unknown }).error_code;
  if (code === 409)
    return 'another process is polling this bot token (409 Conflict): updates stopped; stop the other bridge (or give each its own bot), then restart';
  if (code === 401)
    return 'the bot token was refused (401 Unauthorized, revoked?): updates stopped; set a new TELEGRAM_BOT_TOKEN from @BotFather and restart';
  return `long polling stopped: ${toTelegramError(err).message}; restart the bridge`;
}
