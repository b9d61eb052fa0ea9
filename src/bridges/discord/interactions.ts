/**
 * Live button presses and modal submissions: Discord wants one initial response within 3 s, and
 * what that response is depends on what the handler does next (an ephemeral answer, an update of
 * the pressed message, a modal). Each live interaction serialises its responses and picks the
 * right one; a timer acknowledges it quietly if the handler is slow. Once Discord no longer takes
 * the interaction's token (the 3 s for the initial response or the token's 15 minutes passed),
 * what was meant for it is posted in the channel instead, mentioning the presser.
 */
import {
  type APIActionRowComponent,
  type APIButtonComponentWithCustomId,
  type ButtonInteraction,
  type InteractionReplyOptions,
  MessageFlags,
  type ModalSubmitInteraction,
  type RESTPatchAPIChannelMessageJSONBody,
  type RESTPostAPIChannelMessageJSONBody,
} from 'discord.js';
import { PlatformError } from '../../errors.ts';
import type { ChannelLogger, ReasonAsk } from '../channel.ts';
import { isLostInteraction, toDiscordError } from './errors.ts';
import { contentOf, fitEscaped, reasonButtonRow, reasonModal } from './outbound.ts';

/** An interaction token stays usable this long after the interaction was created. */
export const TOKEN_LIFETIME_MS = 15 * 60 * 1000;

/**
 * How long a press whose handler returned stays open for an edit of the pressed message: the
 * edit of its decision comes a moment later, through the outbox, and answering the press with it
 * (UPDATE_MESSAGE) keeps it out of the bot's REST queue and global limit. Bounded by the ack timer.
 */
export const UPDATE_GRACE_MS = 1000;

/** A press or submission whose responses the adapter makes. */
export type AnswerableInteraction = ButtonInteraction | ModalSubmitInteraction;

/** Posts a message in a channel (not through the interaction): the fallback of a lost one. */
export type ChannelPost = (
  channelId: string,
  body: RESTPostAPIChannelMessageJSONBody,
) => Promise<void>;

/** What one response says: text, whether only the presser sees it, an optional button row. */
interface Response {
  readonly text: string;
  readonly private: boolean;
  readonly row?: APIActionRowComponent<APIButtonComponentWithCustomId>;
}

const replyOptions = (r: Response): InteractionReplyOptions => ({
  content: contentOf(r.text),
  allowedMentions: { parse: [] },
  ...(r.private && { flags: MessageFlags.Ephemeral }),
  ...(r.row && { components: [r.row] }),
});

/** One interaction being answered. */
export class LiveInteraction {
  /** The interaction id. */
  readonly id: string;
  /** The message that carried the pressed button (or opened the modal), if any. */
  readonly messageId: string | undefined;
  /** When the interaction arrived (ms since the epoch). */
  readonly createdAt: number;
  readonly #target: AnswerableInteraction;
  readonly #log: ChannelLogger;
  readonly #post: ChannelPost;
  /** Set once Discord refused the token: every later response goes to the channel. */
  #lost = false;
  /** Private answers held back while the handler runs, in case it opens a modal next. */
  readonly #held: string[] = [];
  #handling = true;
  /** The handler returned; the press waits (UPDATE_GRACE_MS at most) for an update of its message. */
  #grace = false;
  readonly #ackAt: number;
  #chain: Promise<unknown> = Promise.resolve();
  #timer: NodeJS.Timeout | undefined;

  /**
   * Starts the acknowledgement timer (`ackAfterMs` must stay well under Discord's 3 s); `post`
   * sends in the channel what the interaction no longer can.
   */
  constructor(
    target: AnswerableInteraction,
    ackAfterMs: number,
    log: ChannelLogger,
    post: ChannelPost,
  ) {
    this.#target = target;
    this.#log = log;
    this.#post = post;
    this.id = target.id;
    this.messageId = target.message?.id;
    this.createdAt = target.createdTimestamp;
    this.#ackAt = Date.now() + ackAfterMs;
    this.#timer = setTimeout(() => void this.#quietAck('timer'), ackAfterMs);
    this.#timer.unref();
  }

  /** True once the initial response was made. */
  get acknowledged(): boolean {
    return this.#target.deferred || this.#target.replied;
  }

  /**
   * True while no response was made and the handler runs, or returned a moment ago from a press
   * on a message (UPDATE_GRACE_MS): an update can still answer it.
   */
  get updatable(): boolean {
    return (this.#handling || this.#grace) && !this.acknowledged && !this.#lost;
  }

  /** Private: ephemeral (held back while the handler may still open a modal); public: in chat. */
  answer(text: string, isPrivate: boolean): Promise<void> {
    return this.#run(async () => {
      if (isPrivate && this.updatable && this.#target.isButton()) {
        this.#held.push(text);
      } else if (isPrivate) {
        await this.#respond({ text, private: true });
      } else {
        await this.#flushHeld();
        await this.#respond({ text, private: false });
      }
    });
  }

  /** Edits the pressed message as the initial response; false when that is no longer possible. */
  update(body: RESTPatchAPIChannelMessageJSONBody): Promise<boolean> {
    return this.#run(async () => {
      const target = this.#target;
      if (!this.updatable || !(target.isButton() || target.isFromMessage())) return false;
      try {
        await target.update({
          content: body.content ?? '',
          embeds: body.embeds ?? [],
          components: body.components ?? [],
          allowedMentions: { parse: [] },
        });
      } catch (err) {
        // Too late for the interaction: the caller edits the message with a normal call.
        if (!this.#markLost(err)) throw err;
        return false;
      }
      await this.#flushHeld();
      return true;
    });
  }

  /**
   * Opens the reason modal; once the interaction was answered (or it is itself a submission,
   * which cannot open a modal) an ephemeral message offers a button that opens it instead.
   */
  askForReason(prompt: string, ask?: ReasonAsk): Promise<void> {
    return this.#run(async () => {
      if (!this.acknowledged && !this.#lost && this.#target.isButton()) {
        const notes = this.#held.splice(0);
        try {
          await this.#target.showModal(reasonModal(this.id, prompt, notes, ask));
          return;
        } catch (err) {
          if (!this.#markLost(err)) throw err;
          this.#held.unshift(...notes);
        }
      }
      await this.#flushHeld();
      await this.#respond({ text: prompt, private: true, row: reasonButtonRow(this.id, ask) });
    });
  }

  /**
   * The handler returned: send held answers, or acknowledge without a visible change. A press on
   * a message waits a moment first (UPDATE_GRACE_MS, within the ack timer): the edit its handler
   * caused (the decision, queued in the outbox) may still answer it, and the held private
   * answers then follow it up.
   */
  finish(): Promise<void> {
    this.#handling = false;
    clearTimeout(this.#timer);
    const target = this.#target;
    const onMessage = target.isButton() || target.isFromMessage();
    const wait = Math.min(UPDATE_GRACE_MS, this.#ackAt - Date.now());
    const open = !this.acknowledged && !this.#lost;
    if (!onMessage || !open || wait <= 0) {
      return this.#quietAck('finish');
    }
    this.#grace = true;
    this.#timer = setTimeout(() => void this.#endGrace(), wait);
    this.#timer.unref();
    return Promise.resolve();
  }

  /** Stops the timer (the channel is stopping); a press still waiting for an update is acknowledged. */
  cancel(): Promise<void> {
    clearTimeout(this.#timer);
    return this.#grace ? this.#endGrace() : Promise.resolve();
  }

  #endGrace(): Promise<void> {
    this.#grace = false;
    return this.#quietAck('grace');
  }

  #quietAck(why: string): Promise<void> {
    return this.#run(async () => {
      if (this.acknowledged) return;
      if (this.#held.length > 0) await this.#flushHeld();
      else if (this.#lost) return;
      else if (this.#target.isButton() || this.#target.isFromMessage())
        await this.#target.deferUpdate().catch((err: unknown) => {
          if (!this.#markLost(err)) throw err;
        });
      else await this.#respond({ text: 'Received.', private: true });
    }).catch((err: unknown) =>
      this.#log.warn({ err, interaction: this.id, why }, 'discord: could not acknowledge'),
    );
  }

  async #flushHeld(): Promise<void> {
    for (const text of this.#held.splice(0)) await this.#respond({ text, private: true });
  }

  /**
   * The initial response if none was made yet, else a follow-up (valid for 15 minutes); once the
   * token no longer works, a message in the channel that mentions the presser (a private answer
   * becomes public: the presser still learns what became of the press).
   */
  async #respond(response: Response): Promise<void> {
    if (!this.#lost) {
      try {
        if (this.acknowledged) await this.#target.followUp(replyOptions(response));
        else await this.#target.reply(replyOptions(response));
        return;
      } catch (err) {
        if (!this.#markLost(err)) throw err;
      }
    }
    const user = this.#target.user.id;
    const channelId = this.#target.channelId;
    // Every press and submission comes from a channel; nothing to post in otherwise.
    if (channelId === null) throw new PlatformError('discord', 'interaction without a channel');
    await this.#post(channelId, {
      // The mention (at most 25 characters) and the text within Discord's 2000.
      content: `<@${user}> ${fitEscaped(response.text, 1970)}`,
      allowed_mentions: { users: [user] },
      ...(response.row && { components: [response.row] }),
    });
  }

  /** True (and remembered) when `err` says the token no longer works. */
  #markLost(err: unknown): boolean {
    if (!isLostInteraction(err)) return false;
    if (!this.#lost) {
      this.#log.info(
        { interaction: this.id, detail: toDiscordError(err).message },
        'discord: interaction no longer answerable, answering in the channel',
      );
    }
    this.#lost = true;
    return true;
  }

  #run<T>(task: () => Promise<T>): Promise<T> {
    const result = this.#chain.then(task).catch((err: unknown) => {
      throw toDiscordError(err);
    });
    this.#chain = result.catch(() => undefined);
    return result;
  }
}

/** The live interactions by id. */
export class LiveInteractions {
  readonly #byId = new Map<string, LiveInteraction>();

  /** Registers an interaction; entries older than a token's lifetime are dropped. */
  add(live: LiveInteraction, now: number): void {
    for (const [id, l] of this.#byId) {
      if (now - l.createdAt > TOKEN_LIFETIME_MS) this.#byId.delete(id);
    }
    this.#byId.set(live.id, live);
  }

  /** The live interaction with this id, if it is still known. */
  get(id: string): LiveInteraction | undefined {
    return this.#byId.get(id);
  }

  /** The interaction whose press on `messageId` can still be answered by updating it. */
  updatableFor(messageId: string): LiveInteraction | undefined {
    for (const live of this.#byId.values()) {
      if (live.messageId === messageId && live.updatable) return live;
    }
    return undefined;
  }

  /** Stops every timer (the channel is stopping); presses waiting for an update are acknowledged. */
  async clear(): Promise<void> {
    const waiting = [...this.#byId.values()].map((live) => live.cancel());
    this.#byId.clear();
    await Promise.all(waiting);
  }
}
