/**
 * Opt-in enforcement of Telegram's rate limits for the fake Bot API (Bot FAQ: about 1 message
 * per second in one chat, 20 per minute in one group, 30 per second overall; "we may allow short
 * bursts that go over this limit"). A call over a limit is answered 429 with `retry_after`, as
 * Telegram does; a refused call does not count. A limit with a `burst` is a token bucket:
 * `max + burst` calls at once, refilled at `max` per `windowMs` (the sustained rate).
 */
import { ApiError } from './telegram-wire.ts';

/** One limit: at most `max` calls in any `windowMs` (or, with `burst`, a token bucket). */
export interface FakeLimit {
  readonly max: number;
  readonly windowMs: number;
  /** Calls over `max` allowed in a short burst (absent: a strict window). */
  readonly burst?: number;
}

/** The limits the fake enforces (defaults: Telegram's published figures). */
export interface FakeTelegramLimits {
  readonly perChat: FakeLimit;
  readonly perGroup: FakeLimit;
  readonly overall: FakeLimit;
}

/** Telegram's figures (the burst as the outbox's table assumes it: two over the 1/s). */
export const TELEGRAM_FAQ_LIMITS: FakeTelegramLimits = {
  perChat: { max: 1, windowMs: 1000, burst: 2 },
  perGroup: { max: 20, windowMs: 60_000 },
  overall: { max: 30, windowMs: 1000 },
};

/** Methods that put or change a message in a chat: these count. */
export const COUNTED = new Set([
  'sendMessage',
  'editMessageText',
  'editMessageReplyMarkup',
  'deleteMessage',
  'sendDocument',
]);

/** Sliding windows of accepted calls, per chat, per group and overall. */
export class LimitEnforcer {
  readonly #limits: FakeTelegramLimits;
  readonly #now: () => number;
  readonly #seen = new Map<string, number[]>();

  /** `limits`: true for the FAQ's figures; `now` is the fake's clock (real time by default). */
  constructor(limits: FakeTelegramLimits | true = true, now: () => number = Date.now) {
    this.#limits = limits === true ? TELEGRAM_FAQ_LIMITS : limits;
    this.#now = now;
  }

  /** Admits a call (and counts it), or returns the 429 to answer. */
  admit(method: string, params: Record<string, unknown>): ApiError | undefined {
    if (!COUNTED.has(method)) return undefined;
    const chatId = Number(params.chat_id);
    const now = this.#now();
    const checks: [string, FakeLimit][] = [
      ['overall', this.#limits.overall],
      [`chat:${chatId}`, this.#limits.perChat],
    ];
    if (chatId < 0) checks.push([`group:${chatId}`, this.#limits.perGroup]);
    let waitMs = 0;
    for (const [key, limit] of checks) {
      const burst = limit.burst ?? 0;
      // A bucket is full again after (max + burst) / max windows: older calls no longer matter.
      const keep = (limit.windowMs * (limit.max + burst)) / limit.max;
      const times = (this.#seen.get(key) ?? []).filter((t) => t > now - keep);
      this.#seen.set(key, times);
      if (burst > 0) {
        waitMs = Math.max(
          waitMs,
          tokenWait(times, limit.max + burst, limit.max / limit.windowMs, now),
        );
      } else if (times.length >= limit.max) {
        waitMs = Math.max(waitMs, times[times.length - limit.max]! + limit.windowMs - now);
      }
    }
    if (waitMs > 0) {
      const retryAfter = Math.max(1, Math.ceil(waitMs / 1000));
      return new ApiError(429, `Too Many Requests: retry after ${retryAfter}`, {
        retry_after: retryAfter,
      });
    }
    for (const [key] of checks) this.#seen.get(key)!.push(now);
    return undefined;
  }
}

/** Ms until a token bucket (`capacity`, refilled at `rate` per ms, full before `times`) has a token. */
function tokenWait(times: readonly number[], capacity: number, rate: number, now: number): number {
  let level = capacity;
  let last = Number.NEGATIVE_INFINITY;
  for (const t of times) {
    level = Math.min(capacity, level + (t - last) * rate) - 1;
    last = t;
  }
  level = Math.min(capacity, level + (now - last) * rate);
  return level >= 1 - 1e-9 ? 0 : Math.ceil((1 - level) / rate);
}
