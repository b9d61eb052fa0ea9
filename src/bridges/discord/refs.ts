/**
 * Discord chat and message refs. A chat is `discord:<guild>:<channel>[:<thread>]` (DMs use the
 * guild `@me`, as Discord's own links do); a message ref adds `/<id>[,<id>…]` (every part of a
 * split message); a reason prompt (a modal, not a message) is `<chat>/reason:<interaction id>`.
 * Pure.
 */
import { InvalidInputError } from '../../errors.ts';

/** Where a message lives: a guild channel, a thread under it, or a DM (`guild` = '@me'). */
export interface DiscordPlace {
  readonly guild: string;
  readonly channel: string;
  readonly thread?: string;
}

/** The guild part of a DM's chat ref. */
export const DM_GUILD = '@me';

const SNOWFLAKE = /^\d{1,20}$/;
const CHAT_REF = /^discord:(@me|\d{1,20}):(\d{1,20})(?::(\d{1,20}))?$/;

/** `discord:<guild>:<channel>[:<thread>]`. */
export function formatChatRef(place: DiscordPlace): string {
  const base = `discord:${place.guild}:${place.channel}`;
  return place.thread === undefined ? base : `${base}:${place.thread}`;
}

/** Parses a chat ref; anything else is INVALID_INPUT. */
export function parseChatRef(ref: string): DiscordPlace {
  const m = CHAT_REF.exec(ref);
  if (!m) {
    throw new InvalidInputError(
      `not a Discord chat ref: ${JSON.stringify(ref)} (expected discord:<guild>:<channel>[:<thread>])`,
    );
  }
  const place = { guild: m[1]!, channel: m[2]! };
  return m[3] === undefined ? place : { ...place, thread: m[3] };
}

/** The place a message goes: the chat ref's, with `thread` (a thread id) taking over if given. */
export function targetOf(chatRef: string, thread: string | undefined): DiscordPlace {
  const place = parseChatRef(chatRef);
  if (thread === undefined) return place;
  if (!SNOWFLAKE.test(thread)) throw new InvalidInputError(`not a Discord thread id: ${thread}`);
  return { guild: place.guild, channel: place.channel, thread };
}

/** The channel id REST calls address: the thread when there is one (threads are channels). */
export const channelIdOf = (place: DiscordPlace): string => place.thread ?? place.channel;

/** `<chat ref>/<id>[,<id>…]`. */
export function formatMessageRef(place: DiscordPlace, messageIds: readonly string[]): string {
  return `${formatChatRef(place)}/${messageIds.join(',')}`;
}

/** Parses a message ref made by `formatMessageRef`. */
export function parseMessageRef(ref: string): { place: DiscordPlace; messageIds: string[] } {
  const slash = ref.lastIndexOf('/');
  const ids = slash < 0 ? [] : ref.slice(slash + 1).split(',');
  if (ids.length === 0 || !ids.every((id) => SNOWFLAKE.test(id))) {
    throw new InvalidInputError(`not a Discord message ref: ${JSON.stringify(ref)}`);
  }
  return { place: parseChatRef(ref.slice(0, slash)), messageIds: ids };
}

/** The ref `askForReason` returns and the modal's submission carries as `replyToMessageRef`. */
export const reasonRef = (chatRef: string, interactionId: string): string =>
  `${chatRef}/reason:${interactionId}`;
