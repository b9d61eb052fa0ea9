/**
 * Inbound side of the Telegram adapter: turns a Bot API Update into a neutral Command, ButtonPress
 * or Reply (pure; no I/O), and encodes/decodes the interaction handle of a button press.
 */
import type { CallbackQuery, Message, MessageEntity, Update, User } from 'grammy/types';
import { z } from 'zod';
import type { ChatUser, InboundEvent, Interaction } from '../events.ts';
import { decodeHandle, encodeHandle } from '../interaction-handle.ts';
import { filesOf } from './files.ts';
import { formatChatRef, formatMessageRef, type TelegramChat } from './outbound.ts';

/** Who we are, to recognise `/cmd@ourbot` and replies to our own messages. */
export interface BotIdentity {
  readonly id: number;
  readonly username: string;
}

/** What the adapter needs back from an interaction handle. */
export interface InteractionData {
  /** callback_query id */
  readonly q: string;
  /** chat id and topic of the pressed message */
  readonly c: number;
  readonly t?: number | undefined;
  /** pressed message id */
  readonly m: number;
  /** presser's user id and display name */
  readonly u: number;
  readonly n: string;
}

const interactionSchema = z.object({
  q: z.string().min(1),
  c: z.number().int(),
  t: z.number().int().optional(),
  m: z.number().int(),
  u: z.number().int(),
  n: z.string(),
});

/** Packs a press into an opaque, serialisable handle. */
export function encodeInteraction(data: InteractionData): Interaction {
  return encodeHandle('telegram', data);
}

/** Unpacks a handle made by `encodeInteraction`; anything else is INVALID_INPUT. */
export function decodeInteraction(interaction: Interaction): InteractionData {
  return decodeHandle(interaction, 'telegram', interactionSchema, 'Telegram');
}

/** The neutral user; the id is Telegram's immutable numeric id, as a string. */
export function toChatUser(user: User): ChatUser {
  const name = [user.first_name, user.last_name].filter(Boolean).join(' ');
  return {
    platform: 'telegram',
    id: String(user.id),
    display: user.username ? `@${user.username}` : name,
  };
}

/**
 * The topic of a message. Only `is_topic_message` counts: in ordinary groups Telegram also sets
 * message_thread_id on replies, and posting there with that id would fail.
 */
function chatOf(
  message: Pick<Message, 'chat' | 'message_thread_id' | 'is_topic_message'>,
): TelegramChat {
  return message.is_topic_message && message.message_thread_id !== undefined
    ? { chatId: message.chat.id, topic: message.message_thread_id }
    : { chatId: message.chat.id };
}

const startsWithCommand = (entities: readonly MessageEntity[] | undefined): boolean =>
  entities?.some((e) => e.type === 'bot_command' && e.offset === 0) ?? false;

/** A parsed `/verb@bot args` at the start of a text. */
export interface ParsedCommand {
  readonly name: string;
  readonly args: string[];
  /** Written as `/verb@ourbot`: for us, not for another bot of the group. */
  readonly addressed?: boolean;
}

/**
 * Reads the bot_command entity at offset 0. A command addressed to another bot
 * (`/run@otherbot`) is not ours and yields undefined.
 */
export function parseCommand(
  text: string,
  entities: readonly MessageEntity[] | undefined,
  botUsername: string,
): ParsedCommand | undefined {
  const entity = entities?.find((e) => e.type === 'bot_command' && e.offset === 0);
  if (!entity) return undefined;
  const [verb = '', mention] = text.slice(1, entity.length).split('@');
  if (mention !== undefined && mention.toLowerCase() !== botUsername.toLowerCase())
    return undefined;
  if (verb === '') return undefined;
  const args = text.slice(entity.length).trim().split(/\s+/).filter(Boolean);
  // A t.me/<bot>?start=<code> deep link arrives as `/start <code>`: that is pairing in one tap.
  if (verb.toLowerCase() === 'start' && args.length === 1) return { name: 'pair', args };
  return { name: verb.toLowerCase(), args, ...(mention !== undefined && { addressed: true }) };
}

/**
 * The message this one really replies to. In forum topics every message "replies" to the
 * topic's creation message; that is not a reply.
 */
function realReplyTo(message: Message): Message | undefined {
  const to = message.reply_to_message;
  if (!to || to.forum_topic_created) return undefined;
  if (message.is_topic_message && to.message_id === message.message_thread_id) return undefined;
  return to;
}

function fromMessage(message: Message, bot: BotIdentity): InboundEvent | undefined {
  // Channel posts, anonymous admins and other bots have no person behind them to authorise.
  if (!message.from || message.from.is_bot || message.sender_chat) return undefined;
  // A photo or document carries its text as a caption (with caption_entities); without one, the
  // file alone is what the person sent (a reply of only a file is still guidance).
  const files = filesOf(message);
  const text = message.text ?? message.caption ?? (files.length > 0 ? '' : undefined);
  const entities = message.text !== undefined ? message.entities : message.caption_entities;
  if (text === undefined) return undefined;
  const chat = chatOf(message);
  const base = {
    chatRef: formatChatRef(chat),
    ...(chat.topic !== undefined && { threadRef: String(chat.topic) }),
    user: toChatUser(message.from),
    idempotencyKey: `telegram:msg:${message.chat.id}:${message.message_id}`,
    ...(files.length > 0 && { files }),
  };
  const replyTo = realReplyTo(message);
  const command = parseCommand(text, entities, bot.username);
  const direct = message.chat.type === 'private';
  if (command) {
    return {
      kind: 'command',
      ...command,
      rawText: text,
      ...base,
      ...(replyTo?.text !== undefined && { replyToText: replyTo.text }),
      ...(direct && { direct: true }),
    };
  }
  if (startsWithCommand(entities)) return undefined; // addressed to another bot
  if (replyTo?.from?.id !== bot.id) {
    // `@ourbot` alone asks what the bot is: a short help (issue 29), in a group too.
    if (text.trim().toLowerCase() === `@${bot.username.toLowerCase()}`) {
      const help = { name: 'help', args: [], rawText: '', addressed: true, bare: true } as const;
      return { kind: 'command', ...help, ...base, ...(direct && { direct }) };
    }
    // Chatter in a group is not for us; in a private chat everything is.
    if (!direct) return undefined;
    const { chatRef, user, idempotencyKey } = base;
    return { kind: 'text', text, chatRef, user, idempotencyKey };
  }
  return {
    kind: 'reply',
    text,
    replyToMessageRef: formatMessageRef(chat, [replyTo.message_id]),
    ...base,
  };
}

/** An edit of a person's message as an Edit (whether it was for us, chatops finds out). */
function fromEdit(message: Message, bot: BotIdentity): InboundEvent | undefined {
  if (!message.from || message.from.is_bot || message.sender_chat) return undefined;
  const text = message.text ?? message.caption;
  if (text === undefined) return undefined;
  const entities = message.text !== undefined ? message.entities : message.caption_entities;
  const chat = chatOf(message);
  const command = parseCommand(text, entities, bot.username);
  const at = `${message.chat.id}:${message.message_id}`;
  return {
    kind: 'edit',
    text,
    chatRef: formatChatRef(chat),
    ...(chat.topic !== undefined && { threadRef: String(chat.topic) }),
    user: toChatUser(message.from),
    originalKey: `telegram:msg:${at}`,
    ...(command !== undefined && { command: command.name }),
    idempotencyKey: `telegram:edit:${at}:${message.edit_date ?? 0}`,
  };
}

function fromCallback(query: CallbackQuery): InboundEvent | undefined {
  // Inline-mode messages (no `message`) and game buttons are never sent by phasebridge.
  if (query.data === undefined || query.message === undefined) return undefined;
  const chat = chatOf(query.message);
  const user = toChatUser(query.from);
  return {
    kind: 'button',
    token: query.data,
    chatRef: formatChatRef(chat),
    ...(chat.topic !== undefined && { threadRef: String(chat.topic) }),
    messageRef: formatMessageRef(chat, [query.message.message_id]),
    user,
    interaction: encodeInteraction({
      q: query.id,
      c: chat.chatId,
      t: chat.topic,
      m: query.message.message_id,
      u: query.from.id,
      n: user.display,
    }),
    idempotencyKey: `telegram:callback:${query.id}`,
  };
}

/**
 * The neutral event of an update, or undefined when it is not for us. Idempotency keys use the
 * message (chat + message id) or the callback query id, which Telegram never reuses; update_id is
 * not used because Telegram restarts it at a random value after a week without updates.
 */
export function toInbound(update: Update, bot: BotIdentity): InboundEvent | undefined {
  // A webhook body is only as well-formed as its sender: the fields read are checked first.
  if (!updateShape.safeParse(update).success) return undefined;
  if (update.message) return fromMessage(update.message, bot);
  if (update.edited_message) return fromEdit(update.edited_message, bot);
  if (update.callback_query) return fromCallback(update.callback_query);
  return undefined;
}

const wireUser = z.looseObject({ id: z.number(), is_bot: z.boolean().optional() });
const wireChat = z.looseObject({ id: z.number(), type: z.string() });
const wireEntity = z.looseObject({ type: z.string(), offset: z.number(), length: z.number() });
const wireMessage = z.looseObject({
  message_id: z.number(),
  chat: wireChat,
  from: wireUser.optional(),
  text: z.string().optional(),
  caption: z.string().optional(),
  entities: z.array(wireEntity).optional(),
  caption_entities: z.array(wireEntity).optional(),
  message_thread_id: z.number().optional(),
  reply_to_message: z
    .looseObject({ message_id: z.number(), from: wireUser.optional(), text: z.string().optional() })
    .optional(),
});
/** The fields of an update this file reads, with their types (everything else passes). */
const updateShape = z.looseObject({
  message: wireMessage.optional(),
  edited_message: wireMessage.optional(),
  callback_query: z
    .looseObject({
      id: z.string(),
      from: wireUser,
      data: z.string().optional(),
      message: z.looseObject({ message_id: z.number(), chat: wireChat }).optional(),
    })
    .optional(),
});

/** Update types the adapter asks Telegram for (edits: to say they are not applied, issue 29). */
export const ALLOWED_UPDATES = ['message', 'edited_message', 'callback_query'] as const;
