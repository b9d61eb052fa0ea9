/**
 * Inbound side of the Slack adapter, pure: turns a slash command, an app_mention event or a
 * thread reply (message event) into a neutral Command, Reply or DirectText. Button presses and
 * the reason modal's submission are presses.ts; people's edits, edits.ts.
 *
 * Idempotency keys survive Slack's redeliveries (`X-Slack-Retry-Num`, Socket Mode retries): events
 * use `event_id` (thread replies the message's channel and ts, the same in every event that
 * carries it); commands and interactions a hash of `trigger_id`, which a redelivery repeats.
 * The hash keeps a still-valid trigger out of logs and ledgers.
 */
import { createHash } from 'node:crypto';
import type { ChatUser, Command, DirectText, Reply } from '../events.ts';
import { filesOf, type SlackFileObject } from './files.ts';
import { formatChatRef, formatMessageRef, parseChatRef, type SlackChat } from './outbound.ts';

/** Who we are and what we answer to; `team` names every chat ref (one workspace per bot token). */
export interface BotContext {
  readonly team: string;
  readonly botUserId: string;
  /** The slash command, e.g. `/pb`. */
  readonly command: string;
}

/** The fields of a slash command payload that are read. */
export interface SlashCommandPayload {
  readonly command: string;
  readonly text: string;
  readonly channel_id: string;
  readonly user_id: string;
  readonly user_name?: string;
  readonly trigger_id: string;
}

/** The fields of an `app_mention` event (and its envelope) that are read. */
export interface MentionPayload {
  readonly event: {
    readonly user?: string;
    readonly text?: string;
    readonly ts: string;
    readonly channel: string;
    readonly thread_ts?: string;
    readonly bot_id?: string;
    readonly subtype?: string;
    /** Files shared with the message (needs files:read to download). */
    readonly files?: readonly SlackFileObject[];
    /** The sender's profile, which some message events carry (their only name then). */
    readonly user_profile?: {
      readonly name?: unknown;
      readonly display_name?: unknown;
      readonly real_name?: unknown;
    };
  };
  readonly event_id?: string;
}

/** Idempotency key of a command or interaction, the same for every redelivery of it. */
export function triggerKey(triggerId: string): string {
  return `slack:trigger:${createHash('sha256').update(triggerId).digest('hex').slice(0, 32)}`;
}

/** The neutral user of a Slack user id (and handle, when the payload has one). */
export const chatUser = (id: string, name?: string): ChatUser => ({
  platform: 'slack',
  id,
  display: name ? `@${name}` : id,
});

/** The sender of a message event, named by its `user_profile` when it has one (handle first). */
function eventUser(id: string, e: MentionPayload['event']): ChatUser {
  const p = e.user_profile;
  const name = [p?.name, p?.display_name, p?.real_name].find(
    (n): n is string => typeof n === 'string' && n.trim() !== '',
  );
  return chatUser(id, name?.trim());
}

/**
 * Plain text from Slack's message markup: `<@U1|bob>` becomes `slack:U1` (the user ref form
 * `allow`/`deny` take), `<#C1|ops>` `#ops`, `<!here>` `@here`, links their URL, and the three
 * escaped characters are restored.
 */
export function normalizeSlackText(text: string): string {
  return text
    .replace(/<@([A-Z0-9]+)(?:\|[^>]*)?>/gi, 'slack:$1')
    .replace(/<#([A-Z0-9]+)(?:\|([^>]*))?>/gi, (_m, id: string, name?: string) => `#${name || id}`)
    .replace(/<!(here|channel|everyone)(?:\|[^>]*)?>/g, '@$1')
    .replace(/<!subteam\^([A-Z0-9]+)(?:\|([^>]*))?>/gi, (_m, id: string, name?: string) =>
      name ? name : `@${id}`,
    )
    .replace(/<([^>|]+)(?:\|[^>]*)?>/g, '$1')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

/** Splits command text into verb and words; an empty text asks for help. */
export function commandWords(text: string): { name: string; args: string[] } {
  const [verb, ...args] = text.split(/\s+/).filter(Boolean);
  return { name: (verb ?? 'help').toLowerCase(), args };
}

/** True when every one of `keys` of `o` is a string (a payload of another shape is not ours). */
function allStrings(o: unknown, keys: readonly string[]): boolean {
  if (typeof o !== 'object' || o === null) return false;
  const r = o as Record<string, unknown>;
  return keys.every((k) => typeof r[k] === 'string');
}

/** A person's message event with the fields read as strings (thread_ts too, when present). */
function isEvent<E extends MentionPayload['event']>(e: E): e is E & { user: string; text: string } {
  if (!allStrings(e, ['user', 'text', 'channel', 'ts'])) return false;
  const t = (e as { thread_ts?: unknown }).thread_ts;
  return t === undefined || typeof t === 'string';
}

/** Slack's conversation ids: a direct message (IM) channel starts with D. */
const isDirect = (channel: string): boolean => channel.startsWith('D');

/** `/pb run demo add login` → Command `run` [demo, add, login]; other slash commands → undefined. */
export function fromSlashCommand(p: SlashCommandPayload, bot: BotContext): Command | undefined {
  if (!allStrings(p, ['command', 'text', 'channel_id', 'user_id', 'trigger_id'])) return undefined;
  if (p.command.toLowerCase() !== bot.command.toLowerCase()) return undefined;
  const text = normalizeSlackText(p.text).trim();
  return {
    kind: 'command',
    ...commandWords(text),
    rawText: text,
    chatRef: formatChatRef({ team: bot.team, channel: p.channel_id }),
    user: chatUser(p.user_id, p.user_name),
    addressed: true,
    ...(isDirect(p.channel_id) && { direct: true }),
    idempotencyKey: triggerKey(p.trigger_id),
  };
}

/** The text after our mention, as plain text. */
export function mentionText(text: string, bot: BotContext): string {
  const id = bot.botUserId.replace(/[^A-Za-z0-9]/g, '');
  const mention = new RegExp(`<@${id}(?:\\|[^>]*)?>`);
  const at = mention.exec(text);
  return normalizeSlackText(at ? text.slice(at.index + at[0].length) : text).trim();
}

/** A reason asked for in a thread (the modal could not open): where it was asked, and for what. */
export interface ThreadPrompt {
  /** The ref `askForReason` returned: the prompt message. */
  readonly promptRef: string;
  /** The chat ref of the pressed message. */
  readonly chatRef: string;
  /** The answer may be empty (an approval's comment): `@phasebridge` alone answers it. */
  readonly optional?: boolean;
}

/** A mention in a thread whose first reply is awaited, by person: `channel:thread:user`. */
export function threadPromptKey(channel: string, thread: string, user: string): string {
  return `${channel}:${thread}:${user}`;
}

/**
 * `@phasebridge <reason>` in the thread where a reason was asked, by the person asked: a Reply to
 * that prompt, in that thread (chatops answers there). `pending` finds the prompt, forgotten
 * unless `empty` is true and the prompt needs words; anything else is undefined. An empty answer
 * (`@phasebridge` alone) is a Reply too: an empty comment approves, an empty reason is refused
 * out loud and its question stays open (issue 29: never silently nothing).
 */
export async function fromPromptAnswer(
  p: MentionPayload,
  bot: BotContext,
  pending: (key: string, empty: boolean) => Promise<ThreadPrompt | undefined>,
): Promise<Reply | undefined> {
  const e = p.event;
  if (!e.user || e.bot_id || e.subtype || e.text === undefined || e.thread_ts === undefined) {
    return undefined;
  }
  const text = mentionText(e.text, bot);
  // Files with no words answer no question: they are the person's reply (guidance).
  if (text === '' && filesOf(e.files).length > 0) return undefined;
  const prompt = await pending(threadPromptKey(e.channel, e.thread_ts, e.user), text === '');
  if (!prompt) return undefined;
  const asked = parseChatRef(prompt.chatRef);
  const chat: SlackChat = { team: asked.team, channel: e.channel, thread: e.thread_ts };
  return {
    kind: 'reply',
    text,
    replyToMessageRef: prompt.promptRef,
    chatRef: formatChatRef(chat),
    threadRef: e.thread_ts,
    user: eventUser(e.user, e),
    idempotencyKey: p.event_id ? `slack:event:${p.event_id}` : `slack:msg:${e.channel}:${e.ts}`,
  };
}

/**
 * `@phasebridge run demo` → Command `run` [demo]. The text after our mention is the command; a
 * mention in a thread answers in that thread. Bots (ourselves included) are ignored.
 */
export function fromMention(p: MentionPayload, bot: BotContext): Command | undefined {
  const e = p.event;
  if (!isEvent(e) || e.bot_id || e.subtype) return undefined;
  const text = mentionText(e.text, bot);
  const chat: SlackChat =
    e.thread_ts === undefined
      ? { team: bot.team, channel: e.channel }
      : { team: bot.team, channel: e.channel, thread: e.thread_ts };
  const files = filesOf(e.files);
  return {
    kind: 'command',
    ...commandWords(text),
    rawText: text,
    chatRef: formatChatRef(chat),
    ...(chat.thread !== undefined && { threadRef: chat.thread }),
    user: eventUser(e.user, e),
    ...(files.length > 0 && { files }),
    addressed: true,
    // The mention alone asks what the bot is: a short help (issue 29).
    ...(text === '' && files.length === 0 && { bare: true }),
    ...(isDirect(e.channel) && { direct: true }),
    idempotencyKey: p.event_id ? `slack:event:${p.event_id}` : `slack:msg:${e.channel}:${e.ts}`,
  };
}

/** The fields of a `message` event (message.channels / .groups / .im) that are read. */
export type MessagePayload = MentionPayload & {
  readonly event: { readonly channel_type?: string };
};

/** Subtypes of a person's own new message; edits, deletions, joins and bot posts have others. */
const PERSON_SUBTYPES = new Set([undefined, 'thread_broadcast', 'file_share']);

/**
 * A person's reply in a thread (`thread_ts` set and not its own ts) as a Reply to the thread's
 * parent message, `<chat>/<thread_ts>`: guidance when that parent is a run's status or checkpoint
 * message (chatops decides). Files shared with the reply (`file_share`) become `Reply.files`. Bots (ourselves included), edits and other subtypes, top-level
 * messages and replies mentioning us (the app_mention is the command) yield undefined.
 */
export function fromThreadReply(p: MessagePayload, bot: BotContext): Reply | undefined {
  const e = p.event;
  if (!isEvent(e) || e.bot_id || !PERSON_SUBTYPES.has(e.subtype)) return;
  if (e.user === bot.botUserId || e.thread_ts === undefined || e.thread_ts === e.ts) return;
  const id = bot.botUserId.replace(/[^A-Za-z0-9]/g, '');
  if (new RegExp(`<@${id}(?:\\|[^>]*)?>`).test(e.text)) return;
  const text = normalizeSlackText(e.text).trim();
  // A reply sharing files (subtype file_share) carries them as `files`, downloaded like a mention's;
  // files alone, with no words, are still the person's reply.
  const files = filesOf(e.files);
  if (text === '' && files.length === 0) return;
  const parent: SlackChat = { team: bot.team, channel: e.channel };
  return {
    kind: 'reply',
    text,
    replyToMessageRef: formatMessageRef(parent, [e.thread_ts]),
    chatRef: formatChatRef({ ...parent, thread: e.thread_ts }),
    threadRef: e.thread_ts,
    user: eventUser(e.user, e),
    ...(files.length > 0 && { files }),
    idempotencyKey: `slack:msg:${e.channel}:${e.ts}`,
  };
}

/**
 * A person's top-level message in a direct message with the app (message.im) as DirectText;
 * thread replies, bots (ourselves included), edits and channel messages yield undefined.
 */
export function fromDirectMessage(p: MessagePayload, bot: BotContext): DirectText | undefined {
  const e = p.event;
  if (!isEvent(e) || e.bot_id || !PERSON_SUBTYPES.has(e.subtype)) return;
  if (e.user === bot.botUserId || (e.thread_ts !== undefined && e.thread_ts !== e.ts)) return;
  if (e.channel_type !== 'im' && !isDirect(e.channel)) return;
  const text = normalizeSlackText(e.text).trim();
  if (text === '') return;
  return {
    kind: 'text',
    text,
    chatRef: formatChatRef({ team: bot.team, channel: e.channel }),
    user: eventUser(e.user, e),
    idempotencyKey: `slack:msg:${e.channel}:${e.ts}`,
  };
}
