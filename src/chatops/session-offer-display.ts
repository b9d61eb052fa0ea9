/**
 * Every closed session offer shows how it closed (issue 39), whatever a kill interrupted:
 *  - a copy decided (or gone stale) whose closing edit was never confirmed (the process died
 *    first, or the copy's message id became known only when the next process delivered its
 *    send) is edited to its closing, with the outcome recorded for the choice;
 *  - a copy whose message id is unknown and whose send is no longer queued gets its closing in a
 *    new message, once (keyed `offer-closed:<copy>`);
 *  - a second message of a copy's send (a kill between the platform's answer and the outbox's
 *    confirmation; the outbox took its buttons off) is kept as a copy, so it shows the closing
 *    too.
 * Looked at on start and after every confirmed session offer send.
 */

import type { MessageRef } from '../bridges/messages.ts';
import type { SessionOfferRecord } from '../db/repositories/session-offers.ts';
import type { ChatOpsDeps } from './context.ts';
import { channelFor } from './context.ts';
import { SerialPass } from './serial-pass.ts';
import { renderClosedOffer } from './session-offer-message.ts';

/** Finds closed session offer copies that do not show their closing and shows it. */
export class SessionOfferDisplay {
  readonly #deps: ChatOpsDeps;
  /** Copies of an earlier process may be re-posted; this process's own are still being sent. */
  readonly #since: number;
  /** Copies tried in this process (`id:ref`): one whose edit fails is not retried at every look. */
  readonly #tried = new Set<string>();
  readonly #passes = new SerialPass(
    () => this.#look(),
    (err: unknown) => this.#deps.log.error({ err }, 'chatops: offer closings not shown'),
  );

  /** `since`: when this process started (copies stored before it belong to a dead one). */
  constructor(deps: ChatOpsDeps, since: number) {
    this.#deps = deps;
    this.#since = since;
  }

  /** Schedules a look (one at a time; asked during one, another follows it). */
  schedule(): void {
    this.#passes.schedule();
  }

  /** Resolves once no look runs (tests, stop). */
  idle(): Promise<void> {
    return this.#passes.idle();
  }

  /** Shows `copy`'s closing on its message (an edit whose confirmation marks it shown). */
  async close(copy: SessionOfferRecord, outcome?: string): Promise<void> {
    const channel = channelFor(this.#deps, copy.chatRef);
    if (copy.messageRef === null || !channel) return;
    await channel.edit(copy.messageRef, await this.#closed(copy, outcome)).catch((err: unknown) => {
      this.#deps.log.warn({ err, chat: copy.chatRef }, 'chatops: session offer not edited');
    });
  }

  /**
   * `refs`: earlier messages of copy `id`'s send, found after a restart's resend and made
   * buttonless by the adapter. Kept as copies of the offer: a closed one shows its closing.
   */
  async repeated(id: number, refs: readonly MessageRef[]): Promise<void> {
    const offers = this.#deps.repos.sessionOffers;
    const copy = await offers.get(id);
    if (copy === null) return;
    for (const ref of refs) await offers.addRepeat(copy, ref);
    // Closed meanwhile (or before the resend was confirmed): the look edits the repeats.
    if (copy.status !== 'open') this.schedule();
  }

  async #look(): Promise<void> {
    const offers = this.#deps.repos.sessionOffers;
    for (const copy of await offers.unshown()) {
      const tried = `${copy.id}:${copy.messageRef}`;
      // Still queued: its confirmation brings the id (and schedules another look) or shows it.
      if (copy.inFlight || this.#tried.has(tried)) continue;
      if (!channelFor(this.#deps, copy.chatRef)) continue;
      if (copy.messageRef !== null) {
        this.#tried.add(tried);
        await this.close(copy);
        continue;
      }
      // This process's copy between its row and its send: #post records or removes it.
      if (copy.createdAt >= this.#since) continue;
      this.#tried.add(tried);
      try {
        await this.#repost(copy);
      } finally {
        // Once: a chat that refuses it is not asked again at every start.
        await offers.markShown(copy.id);
      }
    }
  }

  /** The closing of a copy the chat may never have seen (its send never reached the outbox). */
  async #repost(copy: SessionOfferRecord): Promise<void> {
    const channel = channelFor(this.#deps, copy.chatRef);
    if (!channel) return;
    await channel
      .send(copy.chatRef, { ...(await this.#closed(copy)), key: `offer-closed:${copy.id}` })
      .catch((err: unknown) => {
        this.#deps.log.warn({ err, chat: copy.chatRef }, 'chatops: offer closing not posted');
      });
  }

  /** The closed message of a copy, owned by its closing (its confirmation marks it shown). */
  async #closed(copy: SessionOfferRecord, outcome?: string) {
    const decider = await this.#deps.repos.people.person(copy.decidedBy ?? '');
    return {
      ...renderClosedOffer(copy, outcome ?? copy.outcome ?? undefined, decider),
      owner: { kind: 'offerClosed' as const, id: copy.id },
    };
  }
}
