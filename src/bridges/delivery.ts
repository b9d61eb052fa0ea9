/**
 * Outbound delivery shared by the platform adapters: per-key serial queues (a chat's messages
 * arrive in order, the parts of a split message stay together) and the one loop that waits out
 * rate limits (429) and retries. Platform errors are translated by the adapter's own `toError`.
 */
import { RateLimitedError } from '../errors.ts';
import type { ApiCallObserver } from './channel.ts';

/** How long to keep waiting out 429s before giving the error to the caller. */
export interface RetryPolicy {
  readonly maxRetries: number;
  /** A single Retry-After longer than this is not waited for. */
  readonly maxWaitMs: number;
}

/** Default: up to 8 waits of at most a minute each (the platforms' limits reset within a minute). */
export const DEFAULT_RETRY_POLICY: RetryPolicy = { maxRetries: 8, maxWaitMs: 60_000 };

/** Options of `withRateLimitRetry`. */
export interface RetryOptions {
  /** Turns whatever the call threw into a phasebridge error (RateLimitedError for a 429). */
  readonly toError: (thrown: unknown) => Error;
  readonly policy?: RetryPolicy;
  /** How to wait (tests pass one that records instead of sleeping). */
  readonly wait?: (ms: number) => Promise<void>;
  /** Told the outcome of every attempt, so a 429 that was waited out is still counted. */
  readonly onApiCall?: ApiCallObserver;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Runs a platform call, waiting `retryAfterMs` and retrying on RateLimitedError so nothing is
 * lost; any other error, or a limit beyond the policy, is thrown as `toError` made it.
 */
export async function withRateLimitRetry<T>(
  call: () => Promise<T>,
  options: RetryOptions,
): Promise<T> {
  const policy = options.policy ?? DEFAULT_RETRY_POLICY;
  const wait = options.wait ?? sleep;
  for (let attempt = 0; ; attempt++) {
    try {
      const result = await call();
      options.onApiCall?.('ok');
      return result;
    } catch (thrown) {
      const err = options.toError(thrown);
      options.onApiCall?.(err instanceof RateLimitedError ? 'rate_limited' : 'error');
      const retryable =
        err instanceof RateLimitedError &&
        attempt < policy.maxRetries &&
        err.retryAfterMs <= policy.maxWaitMs;
      if (!retryable) throw err;
      await wait(err.retryAfterMs);
    }
  }
}

/**
 * Runs tasks one at a time per key (a chat or channel), so a message waiting out a 429 is not
 * overtaken by a later one; different keys proceed in parallel.
 */
export class SerialQueues {
  readonly #tails = new Map<string, Promise<unknown>>();

  /** Queues `task` behind earlier tasks with the same key. */
  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    // Tails never reject, so a failed task does not stop the ones queued after it.
    const previous = this.#tails.get(key) ?? Promise.resolve();
    const result = previous.then(() => task());
    const tail = result.catch(() => undefined);
    this.#tails.set(key, tail);
    void tail.then(() => {
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    });
    return result;
  }

  /** How many keys have tasks queued or running (0 once everything settled). */
  get busyKeys(): number {
    return this.#tails.size;
  }
}
