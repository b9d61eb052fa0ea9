/**
 * How the Slack adapter delivers: the one place that waits out rate limits (the WebClient is told
 * to reject 429s instead of sleeping inside its own queue), per-conversation ordering, and posts
 * to an interaction's `response_url`.
 */
import { InvalidInputError, PlatformError, RateLimitedError } from '../../errors.ts';
import { toSlackError } from './errors.ts';

/** How long to keep waiting out 429s before giving the error to the caller. */
export interface RetryPolicy {
  readonly maxRetries: number;
  /** A single Retry-After longer than this is not waited for. */
  readonly maxWaitMs: number;
}

/** Default: up to 8 waits of at most a minute each (Slack's tier limits reset within a minute). */
export const DEFAULT_RETRY_POLICY: RetryPolicy = { maxRetries: 8, maxWaitMs: 60_000 };

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Runs a Web API call, waiting Retry-After and retrying on 429 so nothing is lost; any other
 * failure (or a limit beyond the policy) is thrown as RateLimitedError / PlatformError.
 */
export async function withRateLimitRetry<T>(
  method: string,
  call: () => Promise<T>,
  policy: RetryPolicy = DEFAULT_RETRY_POLICY,
  wait: (ms: number) => Promise<void> = sleep,
): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await call();
    } catch (thrown) {
      const err = toSlackError(thrown, method);
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
 * Runs tasks one at a time per key (a conversation), so a message waiting out a 429 is not
 * overtaken by a later one; different conversations proceed in parallel.
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
}

/** Where `response_url`s may point: Slack's hooks host, plus the origin of a non-default API URL. */
export function responseUrlOrigins(apiUrl: string | undefined): ReadonlySet<string> {
  const origins = new Set(['https://hooks.slack.com']);
  if (apiUrl !== undefined) origins.add(new URL(apiUrl).origin);
  return origins;
}

/**
 * POSTs JSON to a `response_url`. The URL is checked against `origins` first: interaction handles
 * travel through other modules, and a forged one must not make us POST anywhere else.
 */
export async function postToResponseUrl(
  url: string,
  body: Record<string, unknown>,
  origins: ReadonlySet<string>,
): Promise<void> {
  let origin: string;
  try {
    origin = new URL(url).origin;
  } catch {
    throw new InvalidInputError('response_url is not a URL');
  }
  if (!origins.has(origin)) throw new InvalidInputError(`response_url host ${origin} not allowed`);
  let res: Response;
  try {
    res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(10_000),
    });
  } catch (err) {
    throw new PlatformError('slack', `response_url failed: ${(err as Error).message}`, {
      cause: err,
    });
  }
  await res.arrayBuffer().catch(() => undefined);
  if (res.status === 429) {
    const seconds = Number(res.headers.get('retry-after') ?? '1');
    throw new RateLimitedError('slack', (Number.isFinite(seconds) ? seconds : 1) * 1000);
  }
  if (!res.ok) throw new PlatformError('slack', `response_url failed: HTTP ${res.status}`);
}
