/**
 * Replies in a message's thread (`OutgoingMessage.replyTo`): a message already in a thread is
 * answered there; a message in a guild channel gets a public thread opened on it (Start Thread
 * from Message; the thread's id is the message's, so a thread opened earlier, by us or by a
 * person, is simply reused). Where no thread can be opened (a DM, no Create Public Threads
 * permission) the reply goes in the channel.
 */
import { DiscordAPIError, type REST, Routes } from 'discord.js';
import type { ChannelLogger } from '../channel.ts';
import { toDiscordError } from './errors.ts';
import { type DiscordPlace, DM_GUILD, parseChatRef, parseMessageRef } from './refs.ts';

/** Discord's code when the message has a thread already. */
const THREAD_EXISTS = 160004;
/** Discord's longest thread name. */
const MAX_THREAD_NAME = 100;
/** A thread with no message for a day is archived (and reopens when posted in). */
const ARCHIVE_MINUTES = 1440;

/** Opens (once per process) and finds the threads replies go in. */
export class ReplyThreads {
  readonly #rest: () => REST;
  readonly #log: ChannelLogger;
  /** Message ids known to have a thread. */
  readonly #opened = new Set<string>();

  /** `rest`: the client's REST (read at call time: the client logs in later). */
  constructor(rest: () => REST, log: ChannelLogger) {
    this.#rest = rest;
    this.#log = log;
  }

  /**
   * Where a reply to `replyTo` goes when sent to `chatRef`; `name` names a new thread (the
   * reply's first line). A message of another chat is ignored (the chat ref's place).
   */
  async placeOf(chatRef: string, replyTo: string, name: string): Promise<DiscordPlace> {
    const place = parseChatRef(chatRef);
    const to = parseMessageRef(replyTo);
    if (to.place.guild !== place.guild || to.place.channel !== place.channel) return place;
    if (to.place.thread !== undefined || to.place.guild === DM_GUILD) return to.place;
    const id = to.messageIds[0]!;
    if (!this.#opened.has(id) && !(await this.#open(to.place.channel, id, name))) return place;
    this.#opened.add(id);
    return { ...to.place, thread: id };
  }

  async #open(channel: string, messageId: string, name: string): Promise<boolean> {
    const body = {
      name: name.trim().slice(0, MAX_THREAD_NAME) || 'phasebridge',
      auto_archive_duration: ARCHIVE_MINUTES,
    };
    try {
      await this.#rest().post(Routes.threads(channel, messageId), { body });
      return true;
    } catch (err) {
      if (err instanceof DiscordAPIError && err.code === THREAD_EXISTS) return true;
      this.#log.warn(
        { err: toDiscordError(err), channel },
        'discord: no thread opened on the message; replying in the channel',
      );
      return false;
    }
  }
}
