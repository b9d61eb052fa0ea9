/**
 * Translation of grammY's errors into phasebridge errors, so nothing outside this folder sees a
 * GrammyError. The token is never part of a message (grammY redacts it from HttpError too).
 */
import { GrammyError, HttpError } from 'grammy';
import { NotFoundError, PhasebridgeError, PlatformError, RateLimitedError } from '../../errors.ts';

const PLATFORM = 'telegram';

/**
 * Maps anything thrown by a grammY call to RateLimitedError (429), NotFoundError (the message to
 * edit is gone: deleted in the chat) or PlatformError.
 */
export function toTelegramError(err: unknown): PhasebridgeError {
  if (err instanceof PhasebridgeError) return err;
  if (err instanceof GrammyError) {
    if (err.error_code === 429) {
      const seconds = err.parameters.retry_after ?? 1;
      return new RateLimitedError(PLATFORM, Math.max(0, seconds) * 1000, { cause: err });
    }
    const what = `${err.method} failed (${err.error_code}: ${err.description})`;
    if (err.error_code === 400 && err.description.includes('message to edit not found')) {
      return new NotFoundError(`${PLATFORM}: ${what}`);
    }
    return new PlatformError(PLATFORM, what, { cause: err });
  }
  if (err instanceof HttpError) {
    return new PlatformError(PLATFORM, `network error: ${err.message}`, { cause: err });
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
