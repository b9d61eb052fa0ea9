/**
 * Webhook delivery of the fake Telegram, as Telegram does it: an update is POSTed to the webhook
 * URL with the secret header; an answer other than 2xx, no answer within the timeout (on the
 * fake's clock, or really), or no connection at all is a failed attempt, recorded for
 * getWebhookInfo (`last_error_*`), and the same update (same `update_id`) is sent again after a
 * pause, until it is taken, the webhook is removed (it then waits for getUpdates) or the fake
 * closes.
 */
import type { Update } from './telegram-wire.ts';

/** Options of the webhook delivery (FakeTelegramOptions.webhook). */
export interface FakeWebhookOptions {
  /** An answer later than this (fake clock or real time) is a failure; default 60 s. */
  readonly timeoutMs?: number;
  /** Pause before the same update is sent again, on the fake's clock; default 1 s. */
  readonly retryMs?: number;
  /** Attempts per update before the fake gives up on it; default 20. */
  readonly maxAttempts?: number;
}

/** One delivery attempt: the HTTP status, or why there was none. */
export interface WebhookAttempt {
  readonly updateId: number;
  readonly outcome: number | 'timeout' | 'unreachable';
}

/** Where updates go now (empty url: the webhook was removed). */
export interface WebhookTarget {
  readonly url: string;
  readonly secret: string | undefined;
}

/** Delivers updates to the webhook with Telegram's retries. */
export class WebhookDelivery {
  /** Every attempt, in order. */
  readonly attempts: WebhookAttempt[] = [];
  /** What getWebhookInfo reports about the last failed attempt. */
  lastError: { last_error_date?: number; last_error_message?: string } = {};
  readonly #timeoutMs: number;
  readonly #retryMs: number;
  readonly #maxAttempts: number;
  readonly #now: () => number;
  readonly #pauses = new Set<() => void>();
  #pending = 0;
  #closed = false;

  constructor(options: FakeWebhookOptions, now: () => number) {
    this.#timeoutMs = options.timeoutMs ?? 60_000;
    this.#retryMs = options.retryMs ?? 1000;
    this.#maxAttempts = options.maxAttempts ?? 20;
    this.#now = now;
  }

  /** Updates sent but not taken yet. */
  get pending(): number {
    return this.#pending;
  }

  /**
   * Sends `update` until it is taken; resolves with the last status (0: none). `requeue` gets it
   * back when the webhook was removed meanwhile.
   */
  async deliver(
    update: Update,
    target: () => WebhookTarget,
    requeue: (u: Update) => void,
  ): Promise<number> {
    this.#pending++;
    try {
      let status = 0;
      for (let attempt = 1; ; attempt++) {
        const { url, secret } = target();
        if (!url) {
          requeue(update);
          return status;
        }
        const outcome = await this.#attempt(url, secret, update);
        this.attempts.push({ updateId: update.update_id, outcome });
        if (typeof outcome === 'number') status = outcome;
        if (typeof outcome === 'number' && outcome >= 200 && outcome < 300) return status;
        this.lastError = {
          last_error_date: Math.floor(this.#now() / 1000),
          last_error_message: describe(outcome),
        };
        if (attempt >= this.#maxAttempts || this.#closed) return status;
        await this.#pause();
        if (this.#closed) return status;
      }
    } finally {
      this.#pending--;
    }
  }

  /** Stops retrying (pauses end at once). */
  close(): void {
    this.#closed = true;
    for (const wake of this.#pauses) wake();
  }

  async #attempt(
    url: string,
    secret: string | undefined,
    update: Update,
  ): Promise<WebhookAttempt['outcome']> {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (secret) headers['x-telegram-bot-api-secret-token'] = secret;
    const sentAt = this.#now();
    try {
      const res = await fetch(url, {
        method: 'POST',
        headers,
        body: JSON.stringify(update),
        signal: AbortSignal.timeout(this.#timeoutMs),
      });
      await res.arrayBuffer();
      // Telegram stopped waiting before the answer came: the answer counts for nothing.
      if (this.#now() - sentAt > this.#timeoutMs) return 'timeout';
      return res.status;
    } catch (err) {
      return (err as Error).name === 'TimeoutError' ? 'timeout' : 'unreachable';
    }
  }

  /** Waits `retryMs` on the fake's clock (a test that moves the clock decides when). */
  #pause(): Promise<void> {
    const until = this.#now() + this.#retryMs;
    return new Promise((resolve) => {
      let timer: ReturnType<typeof setTimeout>;
      const wake = () => {
        clearTimeout(timer);
        this.#pauses.delete(wake);
        resolve();
      };
      const tick = () => {
        if (this.#closed || this.#now() >= until) wake();
        else timer = setTimeout(tick, Math.min(10, this.#retryMs));
      };
      this.#pauses.add(wake);
      tick();
    });
  }
}

/** Telegram's words for a failed attempt (getWebhookInfo.last_error_message). */
function describe(outcome: WebhookAttempt['outcome']): string {
  if (outcome === 'timeout') return 'Read timeout expired';
  if (outcome === 'unreachable') return 'Connection refused';
  return `Wrong response from the webhook: ${outcome}`;
}
