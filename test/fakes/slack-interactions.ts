/**
 * What Slack hands an app with each command or interaction and takes back later: trigger ids
 * (views.open within 3 s, once) and response_urls (at most 5 posts within 30 minutes). Both are
 * measured on the fake's clock, so a test moves time instead of waiting.
 */
import type { FakeClock } from './slack-clock.ts';
import { ApiError } from './slack-wire.ts';

/** How long a trigger id opens a modal. */
export const TRIGGER_TTL_MS = 3_000;
/** How long a response_url accepts posts. */
export const RESPONSE_URL_TTL_MS = 30 * 60_000;
/** How many posts a response_url accepts. */
export const RESPONSE_URL_MAX_USES = 5;

/** What a post to a response_url got back. */
export interface ResponseUrlAnswer {
  readonly status: number;
  readonly body: string;
  /** The message the url's press was on (a button press on a message), if any. */
  readonly original?: { readonly channel: string; readonly ts: string };
}

/** Issued trigger ids and response_urls. */
export class FakeSlackInteractions {
  readonly #triggers = new Map<string, number>();
  readonly #urls = new Map<
    string,
    { issuedAt: number; uses: number; original?: { channel: string; ts: string } }
  >();

  /** `clock` is the fake's server-side clock. */
  constructor(readonly clock: FakeClock) {}

  /** Records a trigger id issued now. */
  issueTrigger(id: string): string {
    this.#triggers.set(id, this.clock.now());
    return id;
  }

  /**
   * Spends a trigger id (views.open): `invalid_trigger_id` when never issued or used already,
   * `expired_trigger_id` when older than 3 s.
   */
  useTrigger(id: unknown): void {
    const issuedAt = typeof id === 'string' ? this.#triggers.get(id) : undefined;
    if (issuedAt === undefined) throw new ApiError('invalid_trigger_id');
    this.#triggers.delete(id as string);
    if (this.clock.now() - issuedAt > TRIGGER_TTL_MS) throw new ApiError('expired_trigger_id');
  }

  /**
   * Records a response_url id issued now; `original` is the message whose button was pressed
   * (Slack's `replace_original` / `delete_original` act on it).
   */
  issueResponseUrl(id: string, original?: { channel: string; ts: string }): string {
    this.#urls.set(id, { issuedAt: this.clock.now(), uses: 0, ...(original && { original }) });
    return id;
  }

  /**
   * A post to a response_url: 200 `ok` while it is fresh and has uses left; 404
   * `{"ok":false,"error":"expired_url"}` after 30 minutes or 5 posts, `invalid_url` when unknown.
   */
  useResponseUrl(id: string): ResponseUrlAnswer {
    const url = this.#urls.get(id);
    if (!url) return { status: 404, body: JSON.stringify({ ok: false, error: 'invalid_url' }) };
    const expired = this.clock.now() - url.issuedAt > RESPONSE_URL_TTL_MS;
    if (expired || url.uses >= RESPONSE_URL_MAX_USES) {
      return { status: 404, body: JSON.stringify({ ok: false, error: 'expired_url' }) };
    }
    url.uses++;
    return { status: 200, body: 'ok', ...(url.original && { original: url.original }) };
  }
}
