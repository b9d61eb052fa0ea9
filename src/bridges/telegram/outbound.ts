/**
 * Outbound side of the Telegram adapter, pure: chat/message refs, and rendering neutral messages
 * to Telegram HTML + inline keyboards. Delivery (queues, 429 retries) is in ../delivery.ts.
 */
import { createHash } from 'node:crypto';
import type { InlineKeyboardButton, InlineKeyboardMarkup } from 'grammy/types';
import { InvalidInputError } from '../../errors.ts';
import type { MessageButton, OutgoingMessage, RichSegment, RichText } from '../messages.ts';
import { composeBody, plainTextOf, splitRichText, splitRichTextInto } from '../render-text.ts';

/** Telegram's limit on a message's visible text (after entity parsing). */
export const MAX_TEXT_LENGTH = 4096;
/** Telegram's limit on a document caption's visible text. */
export const MAX_CAPTION_LENGTH = 1024;
/** Telegram's limit on `callback_data`, in UTF-8 bytes. */
export const MAX_CALLBACK_DATA_BYTES = 64;
/** Telegram's limit on a callback answer's text. */
export const MAX_CALLBACK_ANSWER_LENGTH = 200;
const BUTTONS_PER_ROW = 3;

/** A Telegram chat and, in forums, a topic. */
export interface TelegramChat {
  readonly chatId: number;
  readonly topic?: number;
}

/** `telegram:<chat>[:<topic>]`. */
export function formatChatRef(chat: TelegramChat): string {
  return chat.topic === undefined
    ? `telegram:${chat.chatId}`
    : `telegram:${chat.chatId}:${chat.topic}`;
}

const CHAT_REF = /^telegram:(-?\d{1,16})(?::(\d{1,10}))?$/;

/** Parses a chat ref; anything else is INVALID_INPUT (usernames like @channel are not accepted). */
export function parseChatRef(ref: string): TelegramChat {
  const m = CHAT_REF.exec(ref);
  if (!m) throw new InvalidInputError(`not a Telegram chat ref: ${JSON.stringify(ref)}`);
  return m[2] === undefined
    ? { chatId: Number(m[1]) }
    : { chatId: Number(m[1]), topic: Number(m[2]) };
}

/** Parses a neutral thread string (a forum topic id). */
export function parseTopic(thread: string): number {
  if (!/^\d{1,10}$/.test(thread)) throw new InvalidInputError(`not a Telegram topic id: ${thread}`);
  return Number(thread);
}

/**
 * Where a send goes: the chat ref's chat (`thread` naming its topic) and, when `replyTo` is a
 * message in that chat, a reply to its first part in its topic (the run's reply chain).
 */
export function sendTarget(
  chatRef: string,
  thread: string | undefined,
  replyTo: string | undefined,
): { chat: TelegramChat; replyToId?: number } {
  const base = parseChatRef(chatRef);
  const chat = thread === undefined ? base : { chatId: base.chatId, topic: parseTopic(thread) };
  if (replyTo === undefined) return { chat };
  const to = parseMessageRef(replyTo);
  return to.chat.chatId === chat.chatId
    ? { chat: to.chat, replyToId: to.messageIds[0]! }
    : { chat };
}

/** `telegram:<chat>[:<topic>]/<id>[,<id>...]`: a message, or every part of a split message. */
export function formatMessageRef(chat: TelegramChat, messageIds: readonly number[]): string {
  return `${formatChatRef(chat)}/${messageIds.join(',')}`;
}

/** Parses a message ref made by `formatMessageRef`. */
export function parseMessageRef(ref: string): { chat: TelegramChat; messageIds: number[] } {
  const slash = ref.lastIndexOf('/');
  const ids = slash < 0 ? [] : ref.slice(slash + 1).split(',');
  if (ids.length === 0 || !ids.every((id) => /^\d{1,10}$/.test(id))) {
    throw new InvalidInputError(`not a Telegram message ref: ${JSON.stringify(ref)}`);
  }
  return { chat: parseChatRef(ref.slice(0, slash)), messageIds: ids.map(Number) };
}

/** Escapes text for Telegram's HTML parse mode (only these three characters are special). */
export function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

const LINK_PROTOCOLS = new Set(['http:', 'https:', 'tg:']);

function safeUrl(url: string): string | undefined {
  try {
    return LINK_PROTOCOLS.has(new URL(url).protocol) ? url : undefined;
  } catch {
    return undefined;
  }
}

function renderSegment(seg: RichSegment): string {
  const text = escapeHtml(seg.text);
  switch (seg.kind) {
    case 'plain':
      return text;
    case 'bold':
      return `<b>${text}</b>`;
    case 'code':
      return seg.text.includes('\n') ? `<pre>${text}</pre>` : `<code>${text}</code>`;
    case 'link': {
      // A javascript: or malformed URL is shown as plain text rather than linked.
      const url = safeUrl(seg.url);
      return url === undefined
        ? text
        : `<a href="${escapeHtml(url).replace(/"/g, '&quot;')}">${text}</a>`;
    }
    case 'mention':
      // Telegram names people as @username or first name (the name is already that).
      return text;
  }
}

/** Renders RichText to Telegram HTML; all user-supplied text is escaped. */
export function renderHtml(text: RichText): string {
  return text.map(renderSegment).join('');
}

const BUTTON_STYLES = { primary: 'primary', danger: 'danger' } as const;

/** Builds the inline keyboard; refuses a token Telegram would reject instead of sending it. */
export function inlineKeyboard(buttons: readonly MessageButton[]): InlineKeyboardMarkup {
  const rows: InlineKeyboardButton[][] = [];
  for (const [i, b] of buttons.entries()) {
    const bytes = Buffer.byteLength(b.id, 'utf8');
    if (bytes < 1 || bytes > MAX_CALLBACK_DATA_BYTES) {
      throw new InvalidInputError(
        `button id must be 1-${MAX_CALLBACK_DATA_BYTES} bytes, got ${bytes} (${b.label})`,
      );
    }
    if (b.label.trim() === '') throw new InvalidInputError('button label is empty');
    const style =
      b.style === undefined || b.style === 'default' ? undefined : BUTTON_STYLES[b.style];
    const button: InlineKeyboardButton = {
      text: b.label,
      callback_data: b.id,
      ...(style && { style }),
    };
    if (i % BUTTONS_PER_ROW === 0) rows.push([]);
    rows[rows.length - 1]!.push(button);
  }
  return { inline_keyboard: rows };
}

/** One Telegram message of a (possibly split) neutral message. */
export interface RenderedPart {
  readonly html: string;
  /** The text Telegram shows (and returns) once `html` is parsed. */
  readonly visible: string;
  /** Only the last part carries the buttons. */
  readonly keyboard?: InlineKeyboardMarkup;
}

/**
 * Renders a message into parts of at most 4096 visible characters each. Long text is split into
 * several messages (not a document) so it stays readable on a phone; the last part holds the
 * buttons. `maxParts` caps the count for edits, which cannot add messages: the tail is cut short.
 */
export function renderMessage(message: OutgoingMessage, maxParts = Infinity): RenderedPart[] {
  const body = composeBody(message.text, message.fields);
  if (plainTextOf(body).trim() === '') throw new InvalidInputError('message text is empty');
  const keyboard =
    message.buttons && message.buttons.length > 0 ? inlineKeyboard(message.buttons) : undefined;
  const chunks = Number.isFinite(maxParts)
    ? splitRichTextInto(body, MAX_TEXT_LENGTH, maxParts)
    : splitRichText(body, MAX_TEXT_LENGTH);
  return chunks.map((chunk, i) => ({
    html: renderHtml(chunk),
    visible: plainTextOf(chunk),
    ...(i === chunks.length - 1 && keyboard && { keyboard }),
  }));
}

/** Shortens a callback answer to Telegram's 200-character limit. */
export function callbackAnswerText(text: string): string {
  const chars = [...text];
  return chars.length <= MAX_CALLBACK_ANSWER_LENGTH
    ? text
    : `${chars.slice(0, MAX_CALLBACK_ANSWER_LENGTH - 1).join('')}…`;
}

/**
 * What an answer posted as a message is about: the pressed message, the presser and the text. A
 * redelivered press, or the same button pressed again for the same answer, posts it once.
 */
export function answerKey(messageId: number, userId: number, text: string): string {
  const digest = createHash('sha256').update(text).digest('base64url').slice(0, 16);
  return `press:${messageId}:${userId}:${digest}`;
}

/** HTML parse mode; link previews off so status messages stay compact. */
export const HTML_FORMAT = {
  parse_mode: 'HTML',
  link_preview_options: { is_disabled: true },
} as const;

/** The options of a sendMessage (or sendDocument) to `chat`: HTML, topic, keyboard, reply. */
export function sendOptions(
  chat: TelegramChat,
  part: RenderedPart | undefined,
  replyToId?: number,
) {
  return {
    ...HTML_FORMAT,
    ...(chat.topic !== undefined && { message_thread_id: chat.topic }),
    ...(part?.keyboard && { reply_markup: part.keyboard }),
    ...(replyToId !== undefined && {
      reply_parameters: { message_id: replyToId, allow_sending_without_reply: true },
    }),
  };
}
