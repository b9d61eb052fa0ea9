/**
 * What tests inject into the fake Telegram's answers: a Bot API error for the next call of a
 * method, a 429 every n-th call, a call applied but never answered, or answered only once the
 * test releases it.
 */
import { ApiError, type Json } from './telegram-wire.ts';

/** A call applied at once and answered once the test releases it. */
export interface LaterAnswer {
  method: string;
  match: (params: Json) => boolean;
  arrive: () => void;
  released: Promise<void>;
}

/** The injected failures, holds and late answers, taken as calls arrive. */
export class InjectedAnswers {
  #failRule:
    | { every: number; retryAfter: number; methods?: Set<string>; count: number }
    | undefined;
  readonly #failNext: { method: string; error: ApiError }[] = [];
  readonly #held = new Set<string>();
  readonly #later: LaterAnswer[] = [];

  /** Makes every `every`-th call (of `methods`, default all but getUpdates) answer 429. */
  failEvery(every: number, options: { retry_after?: number; methods?: string[] } = {}): void {
    const methods = options.methods ? new Set(options.methods) : undefined;
    this.#failRule = {
      every,
      retryAfter: options.retry_after ?? 0,
      count: 0,
      ...(methods && { methods }),
    };
  }

  /** Makes the next call of `method` fail with `error`. */
  failNext(method: string, error: ApiError): void {
    this.#failNext.push({ method, error });
  }

  /** Applies the next call of `method` but never answers it. */
  holdNext(method: string): void {
    this.#held.add(method);
  }

  /**
   * Applies the next call of `method` that `match` accepts at once, but answers it only once
   * `release` is called; `arrived` resolves when that call was applied.
   */
  answerLater(
    method: string,
    match: (params: Json) => boolean = () => true,
  ): { arrived: Promise<void>; release: () => void } {
    let arrive = () => {};
    let release = () => {};
    const arrived = new Promise<void>((r) => {
      arrive = r;
    });
    const released = new Promise<void>((r) => {
      release = r;
    });
    this.#later.push({ method, match, arrive, released });
    return { arrived, release };
  }

  /** The failure this call of `method` gets, if any (the call counts towards `failEvery`). */
  failureFor(method: string): ApiError | undefined {
    const i = this.#failNext.findIndex((f) => f.method === method);
    if (i >= 0) return this.#failNext.splice(i, 1)[0]!.error;
    const rule = this.#failRule;
    const counted = rule && (rule.methods ? rule.methods.has(method) : method !== 'getUpdates');
    if (!rule || !counted || ++rule.count % rule.every !== 0) return undefined;
    return new ApiError(429, `Too Many Requests: retry after ${rule.retryAfter}`, {
      retry_after: rule.retryAfter,
    });
  }

  /** True (once) when the call of `method` is never to be answered. */
  takeHold(method: string): boolean {
    return this.#held.delete(method);
  }

  /** The late answer this applied call waits for, taken out, if any. */
  takeLater(method: string, params: Json): LaterAnswer | undefined {
    const later = this.#later.findIndex((l) => l.method === method && l.match(params));
    return later < 0 ? undefined : this.#later.splice(later, 1)[0];
  }
}
