/**
 * The response_urls of recent presses, by the pressed message: an edit of that message (the
 * decision the press caused) is posted to the press's `response_url` with `replace_original`
 * instead of chat.update, whose Tier 3 window (50 a minute per workspace) a fan-out keeps full.
 * Slack takes at most 5 posts to a response_url within 30 minutes; uses are counted here, and a
 * url Slack refuses anyway is forgotten (the edit then goes through chat.update).
 */

import type { ChannelLogger } from '../channel.ts';
import { toSlackError } from './errors.ts';
import type { RenderedPart } from './outbound.ts';
import { postToResponseUrl } from './response-url.ts';

/** How long Slack takes posts to a response_url (30 minutes), less a margin for the clocks. */
export const RESPONSE_URL_TTL_MS = 29 * 60_000;
/** How many posts Slack takes per response_url. */
export const RESPONSE_URL_MAX_USES = 5;

interface Press {
  readonly url: string;
  readonly at: number;
}

/** The usable response_url of the last press on each message (channel and ts). */
export class PressUrls {
  readonly #byMessage = new Map<string, Press>();
  readonly #uses = new Map<string, number>();
  readonly #origins: ReadonlySet<string>;
  readonly #log: ChannelLogger;
  readonly #now: () => number;

  /** `origins`: where response_urls may point; `now` is the adapter's clock (ms). */
  constructor(origins: ReadonlySet<string>, log: ChannelLogger, now: () => number = Date.now) {
    this.#origins = origins;
    this.#log = log;
    this.#now = now;
  }

  /** A press on `channel`/`ts` came with `url`; entries past Slack's 30 minutes are dropped. */
  record(channel: string, ts: string, url: string): void {
    const now = this.#now();
    for (const [key, p] of this.#byMessage) {
      if (now - p.at <= RESPONSE_URL_TTL_MS) continue;
      this.#byMessage.delete(key);
      this.#uses.delete(p.url);
    }
    this.#byMessage.set(`${channel}/${ts}`, { url, at: now });
  }

  /** The response_url that may still replace `channel`/`ts`, if any. */
  usable(channel: string, ts: string): string | undefined {
    const p = this.#byMessage.get(`${channel}/${ts}`);
    if (!p || this.#now() - p.at > RESPONSE_URL_TTL_MS) return undefined;
    return (this.#uses.get(p.url) ?? 0) < RESPONSE_URL_MAX_USES ? p.url : undefined;
  }

  /** One post to `url` is being made (counted against Slack's 5). */
  spend(url: string): void {
    this.#uses.set(url, (this.#uses.get(url) ?? 0) + 1);
  }

  /** Slack refused `url` (expired or used up): no edit tries it again. */
  forget(url: string): void {
    this.#uses.set(url, RESPONSE_URL_MAX_USES);
  }

  /**
   * Replaces the pressed message `channel`/`ts` with `part` through its press's response_url
   * (`replace_original`); false when there is none or Slack refuses it (the url is then dropped).
   */
  async replace(channel: string, ts: string, part: RenderedPart): Promise<boolean> {
    const url = this.usable(channel, ts);
    if (url === undefined) return false;
    this.spend(url);
    try {
      const body = { replace_original: true, text: part.text, blocks: part.blocks };
      await postToResponseUrl(url, body, this.#origins);
      return true;
    } catch (err) {
      this.forget(url);
      this.#log.info(
        { err: toSlackError(err) },
        'slack: response_url refused an edit, chat.update instead',
      );
      return false;
    }
  }
}
