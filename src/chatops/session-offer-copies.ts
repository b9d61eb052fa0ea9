/**
 * The copies of a session offer, one per chat it is offered in: each stored before its send (so
 * a press racing the send finds its token), and all of them put right together after a choice,
 * its buttons back when it could not be applied or its outcome shown when it was.
 */
import type { ChatRef } from '../bridges/messages.ts';
import type { SessionKey } from '../db/repositories/session-offers.ts';
import type { InterruptedSession } from '../jobs/orchestrator/sessions.ts';
import { type ChatOpsDeps, channelFor } from './context.ts';
import type { SessionOfferDisplay } from './session-offer-display.ts';
import { renderOpenOffer } from './session-offer-message.ts';

/** The offer of session `s` of `workspace` in the state it is in now. */
export const offerKey = (workspace: string, s: InterruptedSession): SessionKey => ({
  workspace,
  kind: s.kind,
  session: s.session,
  state: s.state,
});

/** Posts a session offer's copies and edits them all after a choice. */
export class SessionOfferCopies {
  readonly #deps: ChatOpsDeps;
  readonly #display: SessionOfferDisplay;

  constructor(deps: ChatOpsDeps, display: SessionOfferDisplay) {
    this.#deps = deps;
    this.#display = display;
  }

  /** Offers `s` in `chat`; `command`: the key of the `sessions` command that asked. */
  async post(
    workspace: string,
    s: InterruptedSession,
    chat: ChatRef,
    command?: string,
  ): Promise<void> {
    const channel = channelFor(this.#deps, chat);
    if (!channel) return;
    const offers = this.#deps.repos.sessionOffers;
    // Stored before sending, so a press racing the send finds its token.
    const row = await offers.add(offerKey(workspace, s), chat, s.runId);
    try {
      const ref = await channel.send(chat, {
        ...renderOpenOffer(s, workspace, row.buttonToken),
        owner: { kind: 'offer', id: row.id },
        // A command redelivered after a restart (killed before its audit) finds its offer sent.
        ...(command === undefined
          ? {}
          : { key: `sessions:${command}:${s.kind}:${s.session}:${s.state}` }),
      });
      const copies = await offers.copies(offerKey(workspace, s));
      if (copies.some((c) => c.id !== row.id && c.messageRef === ref)) {
        // The outbox answered with that earlier copy's message: it stays the copy here.
        await offers.removeUnsent(row.id);
        return;
      }
      await offers.setMessageRef(row.id, ref);
    } catch (err) {
      await offers.removeUnsent(row.id);
      throw err;
    }
  }

  /** Puts the buttons back on every copy after a choice that could not be applied. */
  async reopen(key: SessionKey, s: InterruptedSession): Promise<void> {
    for (const copy of await this.#deps.repos.sessionOffers.copies(key)) {
      const channel = channelFor(this.#deps, copy.chatRef);
      // A repeat (a message sent twice by a kill) stays buttonless: its copy offers the choice.
      if (copy.messageRef === null || copy.status !== 'open' || copy.repeatOf !== null) continue;
      if (!channel) continue;
      await channel
        .edit(copy.messageRef, renderOpenOffer(s, copy.workspace, copy.buttonToken))
        .catch((err: unknown) => {
          this.#deps.log.warn({ err, chat: copy.chatRef }, 'chatops: session offer not reopened');
        });
    }
  }

  /**
   * Edits every copy of the offer (all chats) to its outcome; a copy whose send is still
   * unanswered is edited once its id is known (the display's look after its confirmation).
   */
  async close(key: SessionKey, outcome: string): Promise<void> {
    for (const copy of await this.#deps.repos.sessionOffers.copies(key)) {
      await this.#display.close(copy, outcome);
    }
  }
}
