/**
 * Long polling whose confirmations follow the handling. Telegram confirms an update when a later
 * getUpdates asks with a higher offset; grammY's own loop asks with the offset past the update
 * it is *trying*, and its `stop()` confirms that one at once, even while it is still being
 * handled. A bridge that lost its leader lease mid-update (its Redis cut off) then exited with
 * the update half done, and Telegram never gave it to the new leader: the press was never
 * answered. Here an update is confirmed only by the getUpdates after its handling settled, and
 * `stop()` confirms nothing: an update in hand when the process dies is delivered again to the
 * next poller, which passes over those already applied (updates.ts keeps their ids in bridge.db,
 * shared by every bridge). A final confirming call is not made either: under several bridges it
 * would end the new leader's held poll with 409.
 */
import { type Api, GrammyError } from 'grammy';
import type { Update } from 'grammy/types';
import type { ChannelLogger } from '../channel.ts';
import { isDeclined } from '../declined.ts';
import { ALLOWED_UPDATES } from './inbound.ts';

/** Wait after a failed getUpdates (grammY's): Telegram down, a network error. */
const RETRY_MS = 3_000;

/** Options of {@link UpdatePoller}. */
export interface UpdatePollerOptions {
  readonly api: Api;
  /** Handles one update; the next is asked for only once it settled (rejections are logged). */
  readonly handle: (update: Update) => Promise<void>;
  /** How long Telegram holds a getUpdates without updates (seconds). */
  readonly timeoutSeconds: number;
  readonly log: ChannelLogger;
  /** Polling ended on its own (401: token revoked, 409: another poller): it is not retried. */
  readonly onFatal: (err: unknown) => void;
  /** Set: a 409 is retried after this pause instead of ending polling (options.ts says when). */
  readonly conflictRetryMs?: number;
}

/** One long-polling loop, started once and stopped once. */
export class UpdatePoller {
  readonly #o: UpdatePollerOptions;
  readonly #abort = new AbortController();
  /** Every update below it was handled: the next getUpdates confirms them. */
  #offset = 0;
  #loop: Promise<void> | undefined;

  constructor(options: UpdatePollerOptions) {
    this.#o = options;
  }

  /** Polls in the background (the caller removed any webhook: getUpdates is refused meanwhile). */
  start(): void {
    this.#loop = this.#run().catch((err: unknown) => {
      if (!this.#abort.signal.aborted) this.#o.onFatal(err);
    });
  }

  /** Stops asking, lets the update being handled settle, and confirms nothing (see above). */
  async stop(): Promise<void> {
    this.#abort.abort();
    await this.#loop;
  }

  async #run(): Promise<void> {
    const signal = this.#abort.signal;
    let allowed: typeof ALLOWED_UPDATES | undefined = ALLOWED_UPDATES;
    while (!signal.aborted) {
      let updates: Update[];
      try {
        updates = await this.#o.api.getUpdates(
          {
            offset: this.#offset,
            timeout: this.#o.timeoutSeconds,
            // Telegram keeps the last setting: sent once.
            ...(allowed === undefined ? {} : { allowed_updates: allowed }),
          },
          // grammY types its signal with the abort-controller shim's; Node's is the same at runtime.
          signal as unknown as Parameters<Api['getUpdates']>[1],
        );
        allowed = undefined;
      } catch (err) {
        if (signal.aborted) return;
        const conflict = err instanceof GrammyError && err.error_code === 409;
        if (conflict && this.#o.conflictRetryMs !== undefined) {
          this.#o.log.warn(
            { err },
            'telegram: another process polled (a former leader?); polling again',
          );
          await pause(this.#o.conflictRetryMs, signal);
          continue;
        }
        if (conflict || (err instanceof GrammyError && err.error_code === 401)) throw err;
        const wait = err instanceof GrammyError ? (err.parameters.retry_after ?? 3) * 1000 : 0;
        this.#o.log.warn({ err }, 'telegram: getUpdates failed; retrying');
        await pause(Math.max(wait, RETRY_MS), signal);
        continue;
      }
      for (const update of updates) {
        // A stop between two updates of a batch leaves the rest unconfirmed, for the next poller.
        if (signal.aborted) return;
        try {
          await this.#o.handle(update);
        } catch (err) {
          // Declined (another process leads now): this one and the rest stay unconfirmed for it.
          if (isDeclined(err)) return;
          this.#o.log.error({ err }, 'telegram: update handling failed');
        }
        this.#offset = update.update_id + 1;
      }
    }
  }
}

/** Waits `ms`, or less when `signal` aborts. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const t = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}
