/**
 * Live button presses and modal submissions: Discord wants one initial response within 3 s, and
 * what that response is depends on what the handler does next (an ephemeral answer, an update of
 * the pressed message, a modal). Each live interaction serialises its responses and picks the
 * right one; a timer acknowledges it quietly if the handler is slow.
 */
import {
  type ButtonInteraction,
  type InteractionReplyOptions,
  MessageFlags,
  type ModalSubmitInteraction,
  type RESTPatchAPIChannelMessageJSONBody,
} from 'discord.js';
import type { ChannelLogger } from '../channel.ts';
import { toDiscordError } from './errors.ts';
import { contentOf, reasonButtonRow, reasonModal } from './outbound.ts';

/** An interaction token stays usable this long after the interaction was created. */
export const TOKEN_LIFETIME_MS = 15 * 60 * 1000;

/** A press or submission whose responses the adapter makes. */
export type AnswerableInteraction = ButtonInteraction | ModalSubmitInteraction;

const privately = (text: string): InteractionReplyOptions => ({
  content: contentOf(text),
  flags: MessageFlags.Ephemeral,
  allowedMentions: { parse: [] },
});
const publicly = (text: string): InteractionReplyOptions => ({
  content: contentOf(text),
  allowedMentions: { parse: [] },
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
  /** Private answers held back while the handler runs, in case it opens a modal next. */
  readonly #held: string[] = [];
  #handling = true;
  #chain: Promise<unknown> = Promise.resolve();
  #timer: NodeJS.Timeout | undefined;

  /** Starts the acknowledgement timer (`ackAfterMs` must stay well under Discord's 3 s). */
  constructor(target: AnswerableInteraction, ackAfterMs: number, log: ChannelLogger) {
    this.#target = target;
    this.#log = log;
    this.id = target.id;
    this.messageId = target.message?.id;
    this.createdAt = target.createdTimestamp;
    this.#timer = setTimeout(() => void this.#quietAck('timer'), ackAfterMs);
    this.#timer.unref();
  }

  /** True once the initial response was made. */
  get acknowledged(): boolean {
    return this.#target.deferred || this.#target.replied;
  }

  /** True while the handler runs and no response was made: an update can still answer it. */
  get updatable(): boolean {
    return this.#handling && !this.acknowledged;
  }

  /** Private: ephemeral (held back while the handler may still open a modal); public: in chat. */
  answer(text: string, isPrivate: boolean): Promise<void> {
    return this.#run(async () => {
      if (isPrivate && this.#handling && !this.acknowledged && this.#target.isButton()) {
        this.#held.push(text);
      } else if (isPrivate) {
        await this.#respond(privately(text));
      } else {
        await this.#flushHeld();
        await this.#respond(publicly(text));
      }
    });
  }

  /** Edits the pressed message as the initial response; false when that is no longer possible. */
  update(body: RESTPatchAPIChannelMessageJSONBody): Promise<boolean> {
    return this.#run(async () => {
      const target = this.#target;
      if (!this.updatable || !(target.isButton() || target.isFromMessage())) return false;
      await target.update({
        content: body.content ?? '',
        embeds: body.embeds ?? [],
        components: body.components ?? [],
        allowedMentions: { parse: [] },
      });
      await this.#flushHeld();
      return true;
    });
  }

  /**
   * Opens the reason modal; once the interaction was answered (or it is itself a submission,
   * which cannot open a modal) an ephemeral message offers a button that opens it instead.
   */
  askForReason(prompt: string): Promise<void> {
    return this.#run(async () => {
      if (!this.acknowledged && this.#target.isButton()) {
        const notes = this.#held.splice(0);
        await this.#target.showModal(reasonModal(this.id, prompt, notes));
        return;
      }
      await this.#flushHeld();
      await this.#respond({ ...privately(prompt), components: [reasonButtonRow(this.id)] });
    });
  }

  /** The handler returned: send held answers, or acknowledge without a visible change. */
  finish(): Promise<void> {
    this.#handling = false;
    clearTimeout(this.#timer);
    return this.#quietAck('finish');
  }

  /** Stops the timer without responding (the channel is stopping). */
  cancel(): void {
    clearTimeout(this.#timer);
  }

  #quietAck(why: string): Promise<void> {
    return this.#run(async () => {
      if (this.acknowledged) return;
      if (this.#held.length > 0) await this.#flushHeld();
      else if (this.#target.isButton() || this.#target.isFromMessage())
        await this.#target.deferUpdate();
      else await this.#target.reply(privately('Received.'));
    }).catch((err: unknown) =>
      this.#log.warn({ err, interaction: this.id, why }, 'discord: could not acknowledge'),
    );
  }

  async #flushHeld(): Promise<void> {
    for (const text of this.#held.splice(0)) await this.#respond(privately(text));
  }

  /** The initial response if none was made yet, else a follow-up (valid for 15 minutes). */
  async #respond(options: InteractionReplyOptions): Promise<void> {
    if (this.acknowledged) await this.#target.followUp(options);
    else await this.#target.reply(options);
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

  /** Stops every timer (the channel is stopping). */
  clear(): void {
    for (const live of this.#byId.values()) live.cancel();
    this.#byId.clear();
  }
}
