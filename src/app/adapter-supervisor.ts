/**
 * Starts the chat adapters and keeps retrying one whose platform does not answer at start-up
 * (1 s doubling to 60 s, ±20 % jitter), so the console and the other adapters serve meanwhile.
 * `/readyz` names such an adapter with its last error until it has started, and an adapter that
 * stopped on its own later (its `fault`): that one is not retried, a restart with a fix is needed.
 */
import type { Channel, Platform } from '../bridges/channel.ts';
import type { InboundHandler } from '../bridges/events.ts';
import type { NotReady, Readiness } from '../http/health.ts';
import { type Log, secretRedactor } from '../log.ts';

/** When to try again after a failed start. */
export interface RetryPolicy {
  readonly initialMs: number;
  readonly maxMs: number;
  /** Each delay is scaled by a random factor in [1 - jitter, 1 + jitter] (then capped). */
  readonly jitter: number;
}

/** 1 s, 2 s, 4 s … up to 60 s, each ±20 %: many bridges restarted at once do not retry in step. */
export const ADAPTER_RETRY: RetryPolicy = { initialMs: 1000, maxMs: 60_000, jitter: 0.2 };

/** The delay before the next attempt after `failures` failed ones (1 = after the first). */
export function retryDelay(
  failures: number,
  policy: RetryPolicy = ADAPTER_RETRY,
  random: () => number = Math.random,
): number {
  const base = Math.min(policy.maxMs, policy.initialMs * 2 ** Math.max(0, failures - 1));
  const factor = 1 - policy.jitter + 2 * policy.jitter * random();
  return Math.round(Math.min(policy.maxMs, base * factor));
}

/** Options of {@link AdapterSupervisor}. */
export interface AdapterSupervisorOptions {
  readonly handler: InboundHandler;
  readonly log: Log;
  /** Configured secrets: masked in the errors `/readyz` shows. */
  readonly secrets?: readonly string[];
  readonly retry?: RetryPolicy;
  /** How long `start()` waits for an adapter's first attempt before leaving it to run on; 15 s. */
  readonly firstWaitMs?: number;
  /** How long `stop()` lets an attempt in progress settle before stopping anyway; 5 s. */
  readonly stopWaitMs?: number;
}

interface Entry {
  readonly platform: Platform;
  readonly channel: Channel;
  state: 'starting' | 'waiting' | 'running' | 'stopped';
  failures: number;
  lastError?: string;
  retryAt?: number;
  /** When the attempt in progress began (`/readyz` says how long it has been going). */
  attemptAt?: number;
  timer?: NodeJS.Timeout;
  attempt?: Promise<void>;
}

/** Longest error text `/readyz` shows. */
const MAX_DETAIL = 300;

/** The bridge's chat adapters, each started (and retried) on its own. */
export class AdapterSupervisor {
  readonly #entries: Entry[] = [];
  readonly #opts: AdapterSupervisorOptions;
  readonly #redact: (text: string) => string;
  #stopping = false;

  constructor(opts: AdapterSupervisorOptions) {
    this.#opts = opts;
    this.#redact = secretRedactor(opts.secrets ?? []);
  }

  /**
   * Adds each adapter's readiness probe, then starts them all at once. Resolves when every first
   * attempt has settled (or `firstWaitMs` passed); an adapter that failed retries in the
   * background. Never rejects because of an adapter.
   */
  async start(channels: Iterable<[Platform, Channel]>, readiness: Readiness): Promise<void> {
    for (const [platform, channel] of channels) {
      const entry: Entry = { platform, channel, state: 'starting', failures: 0 };
      this.#entries.push(entry);
      readiness.add(platform, async () => this.#probe(entry));
    }
    const waitMs = this.#opts.firstWaitMs ?? 15_000;
    await Promise.all(this.#entries.map((e) => settledWithin(this.#attempt(e), waitMs)));
  }

  /** Cancels pending retries, then stops every started adapter (the last one first). */
  async stop(): Promise<void> {
    this.#stopping = true;
    for (const e of this.#entries) clearTimeout(e.timer);
    const waitMs = this.#opts.stopWaitMs ?? 5000;
    await Promise.all(this.#entries.map((e) => e.attempt && settledWithin(e.attempt, waitMs)));
    for (const e of [...this.#entries].reverse()) {
      if (e.state === 'running') await this.#stopChannel(e);
      e.state = 'stopped';
    }
  }

  #attempt(e: Entry): Promise<void> {
    e.state = 'starting';
    e.attemptAt = Date.now();
    e.attempt = e.channel.start(this.#opts.handler).then(
      () => this.#started(e),
      (err: unknown) => this.#failed(e, err),
    );
    return e.attempt;
  }

  #started(e: Entry): void {
    if (this.#stopping && e.state === 'stopped') {
      // stop() gave up waiting for this attempt; undo it now that it finished.
      void this.#stopChannel(e);
      return;
    }
    e.state = 'running';
    if (e.failures > 0) {
      this.#opts.log.info(
        { platform: e.platform, failedAttempts: e.failures },
        `${title(e.platform)} is up again (started after ${e.failures} failed attempt(s))`,
      );
    } else {
      this.#opts.log.info({ platform: e.platform }, 'adapter started');
    }
    e.failures = 0;
    e.lastError = undefined;
  }

  /**
   * One warn line per state change (the first failure, or a different error), without the stack:
   * a platform down for an hour must not fill the log. Every attempt, with its stack, at debug.
   */
  #failed(e: Entry, err: unknown): void {
    e.failures++;
    const text = err instanceof Error ? err.message : String(err);
    const previous = e.lastError;
    e.lastError = this.#redact(text.split('\n')[0]!).slice(0, MAX_DETAIL);
    if (this.#stopping) return;
    const delay = retryDelay(e.failures, this.#opts.retry);
    e.state = 'waiting';
    e.retryAt = Date.now() + delay;
    const fields = { platform: e.platform, failedAttempts: e.failures, retryInMs: delay };
    this.#opts.log.debug({ ...fields, err }, 'adapter start attempt failed');
    if (previous !== e.lastError) {
      const state = NETWORK.test(e.lastError) ? 'unreachable' : 'could not start';
      const reason = e.lastError.replace(new RegExp(`^${e.platform}: `), '');
      this.#opts.log.warn(
        { ...fields, error: e.lastError },
        `${title(e.platform)} ${state}, retrying in ${Math.max(1, Math.round(delay / 1000))} s (${reason}); the console and the other adapters keep serving`,
      );
    }
    e.timer = setTimeout(() => {
      e.timer = undefined;
      void this.#attempt(e);
    }, delay);
  }

  async #stopChannel(e: Entry): Promise<void> {
    await e.channel
      .stop()
      .catch((err: unknown) =>
        this.#opts.log.error({ err, platform: e.platform }, 'bridge: error while stopping'),
      );
  }

  /** Each chat adapter's state now (the console shows it): up, or why not. */
  status(): { name: string; ok: boolean; detail?: string }[] {
    return this.#entries
      .filter((e) => e.platform !== 'web')
      .map((e) => {
        const p = this.#probe(e);
        return p === true
          ? { name: e.platform, ok: true }
          : { name: e.platform, ok: false, detail: p.detail };
      });
  }

  #probe(e: Entry): true | NotReady {
    const fault = e.state === 'running' ? e.channel.fault : undefined;
    if (fault !== undefined) return { ready: false, detail: `${e.platform} stopped: ${fault}` };
    if (e.state === 'running' && running(e.channel)) return true;
    if (e.state === 'running') return { ready: false, detail: `${e.platform} is not running` };
    const going = e.attemptAt === undefined ? 0 : Math.floor((Date.now() - e.attemptAt) / 1000);
    if (e.lastError === undefined) {
      const since = going > 0 ? ` (for ${going} s, waiting for ${e.platform} to answer)` : '';
      return { ready: false, detail: `${e.platform} is starting${since}` };
    }
    const next =
      e.state === 'waiting' && e.retryAt !== undefined
        ? `next attempt in ${Math.max(0, Math.ceil((e.retryAt - Date.now()) / 1000))} s`
        : `attempt in progress for ${going} s`;
    return {
      ready: false,
      detail: `${e.platform} could not start (${e.failures} attempt(s), ${next}): ${e.lastError}`,
    };
  }
}

/** Errors that mean the platform was not reached (as opposed to refusing us). */
const NETWORK =
  /network|ECONNREFUSED|ECONNRESET|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|EHOSTUNREACH|fetch failed|socket|timed? ?out/i;

/** `telegram` → `Telegram`, for lines a person reads. */
function title(platform: string): string {
  return platform.charAt(0).toUpperCase() + platform.slice(1);
}

/** The web console says whether it runs; the other adapters count as running once started. */
function running(channel: Channel): boolean {
  const flag = (channel as { running?: unknown }).running;
  return flag === undefined ? true : flag === true;
}

/** Waits for `p` to settle, at most `ms`; never rejects, never leaves a timer behind. */
function settledWithin(p: Promise<unknown>, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    void p.then(
      () => {
        clearTimeout(timer);
        resolve();
      },
      () => {
        clearTimeout(timer);
        resolve();
      },
    );
  });
}
