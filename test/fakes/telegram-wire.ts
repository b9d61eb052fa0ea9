/**
 * Wire-level pieces of the fake Telegram Bot API: the shapes it stores, request parsing (JSON,
 * urlencoded, multipart with attach:// files), Telegram's HTML parse mode, and Message encoding.
 */
import type { IncomingMessage } from 'node:http';

/** A Telegram user as it appears in updates. */
export interface FakeUser {
  id: number;
  first_name: string;
  username?: string;
  is_bot?: boolean;
}

/** A Telegram chat as it appears in updates. */
export interface FakeChat {
  id: number;
  type: 'private' | 'group' | 'supergroup';
  title?: string;
  is_forum?: boolean;
}

/** A message the fake knows about (sent by the bot or injected as a user's). */
export interface StoredMessage {
  chat: FakeChat;
  message_id: number;
  from: FakeUser;
  text?: string;
  /** The text as the bot sent it, before HTML parsing. */
  rawText?: string;
  threadId?: number;
  replyMarkup?: Record<string, unknown>;
  silent?: boolean;
  replyToId?: number;
  document?: { fileName: string; data: Buffer };
  caption?: string;
  deleted?: boolean;
  edits: number;
}

/** One call the fake received, successful or not. */
export interface RecordedCall {
  method: string;
  params: Record<string, unknown>;
  ok: boolean;
  errorCode?: number;
  /** When the fake answered it (ms since the epoch). */
  at?: number;
}

/** A JSON object. */
export type Json = Record<string, unknown>;
/** An update as sent to the bot. */
export type Update = Json & { update_id: number };

/** A Bot API error answer: HTTP status = error_code. */
export class ApiError extends Error {
  constructor(
    readonly code: number,
    description: string,
    readonly parameters?: Json,
  ) {
    super(description);
  }
}
/** Telegram's answer to a held getUpdates when another process polls the same token. */
export const TERMINATED_BY_OTHER_POLLER =
  'Conflict: terminated by other getUpdates request; make sure that only one bot instance is running';

/** How long Telegram lets a bot answer a callback query. */
export const CALLBACK_QUERY_TTL_MS = 15_000;

/** A 400 Bad Request error. */
export const bad = (what: string) => new ApiError(400, `Bad Request: ${what}`);

const NUMERIC = new Set([
  'chat_id',
  'message_id',
  'message_thread_id',
  'offset',
  'limit',
  'timeout',
]);
const BOOLEAN = new Set(['show_alert', 'disable_notification', 'drop_pending_updates']);
const JSONISH =
  /^(reply_markup|commands|allowed_updates|link_preview_options|reply_parameters|scope)$/;

/** Form values are strings on the wire; give them the types a JSON body would have. */
function coerce(key: string, value: string): unknown {
  if (NUMERIC.has(key)) return Number(value);
  if (BOOLEAN.has(key)) return value === 'true';
  return JSONISH.test(key) ? JSON.parse(value) : value;
}

const TAGS = new Set(['b', 'strong', 'i', 'em', 'u', 'ins', 's', 'strike', 'del', 'code', 'pre']);
const MORE_TAGS = new Set(['a', 'tg-spoiler', 'span', 'blockquote', 'tg-emoji']);
const ENTITIES: Json = { lt: '<', gt: '>', amp: '&', quot: '"' };

/** Parses Telegram HTML to the visible text, failing like Telegram on bad markup. */
export function parseTelegramHtml(html: string): string {
  const token = /<(\/?)([a-zA-Z-]+)((?:\s[^>]*)?)>|&(lt|gt|amp|quot|#\d+);|[<>&]|[^<>&]+/gy;
  const stack: string[] = [];
  let text = '';
  for (let m = token.exec(html); m !== null; m = token.exec(html)) {
    const [all, closing, rawName, attrs, entity] = m;
    const name = rawName?.toLowerCase();
    if (name !== undefined) {
      if (!TAGS.has(name) && !MORE_TAGS.has(name))
        throw bad(`can't parse entities: Unsupported start tag "${name}"`);
      if (closing) {
        if (stack.pop() !== name) throw bad(`can't parse entities: Unexpected end tag "${name}"`);
      } else {
        if (name === 'a' && !/\shref="[^"]*"/.test(attrs ?? ''))
          throw bad("can't parse entities: a without href");
        stack.push(name);
      }
    } else if (entity !== undefined) {
      text += entity.startsWith('#')
        ? String.fromCodePoint(Number(entity.slice(1)))
        : ENTITIES[entity];
    } else if (all === '<' || all === '>' || all === '&') {
      // Stricter than Telegram for '>', so an adapter that forgets to escape is caught.
      throw bad(`can't parse entities: unescaped "${all}"`);
    } else {
      text += all;
    }
  }
  if (stack.length > 0)
    throw bad(
      `can't parse entities: Can't find end tag corresponding to start tag "${stack.at(-1)}"`,
    );
  return text;
}

/** The topic a call targets. */
export function threadOf(p: Json): number | undefined {
  return p.message_thread_id === undefined ? undefined : Number(p.message_thread_id);
}

/** Reads query string and body (JSON, urlencoded or multipart with attach:// files). */
export async function readParams(req: IncomingMessage): Promise<Json> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = Buffer.concat(chunks);
  const type = req.headers['content-type'] ?? '';
  const params: Json = {};
  for (const [k, v] of new URL(req.url ?? '/', 'http://x').searchParams) params[k] = coerce(k, v);
  if (type.startsWith('application/json'))
    return { ...params, ...(JSON.parse(body.toString('utf8') || '{}') as Json) };
  if (type.startsWith('application/x-www-form-urlencoded')) {
    for (const [k, v] of new URLSearchParams(body.toString('utf8'))) params[k] = coerce(k, v);
  } else if (type.startsWith('multipart/form-data')) {
    const files = new Map<string, { fileName: string; data: Buffer }>();
    for (const part of multipartParts(body, type)) {
      if (part.fileName === undefined)
        params[part.name] = coerce(part.name, part.data.toString('utf8'));
      else files.set(part.name, { fileName: part.fileName, data: part.data });
    }
    // grammY names file parts randomly and points at them with attach://<name>.
    const attached = new Set<string>();
    for (const [k, v] of Object.entries(params)) {
      if (typeof v !== 'string' || !v.startsWith('attach://')) continue;
      attached.add(v.slice(9));
      params[k] = files.get(v.slice(9));
    }
    for (const [k, f] of files) if (!attached.has(k)) params[k] = f;
  }
  return params;
}

/** A stored message as a Bot API Message object. */
export function toWireMessage(m: StoredMessage): Json {
  return {
    message_id: m.message_id,
    date: 1_700_000_000,
    chat: m.chat,
    from: m.from,
    ...(m.threadId !== undefined && { message_thread_id: m.threadId, is_topic_message: true }),
    ...(m.text !== undefined && { text: m.text }),
    ...(m.document && {
      document: {
        file_id: `f${m.message_id}`,
        file_unique_id: `u${m.message_id}`,
        file_name: m.document.fileName,
        file_size: m.document.data.length,
      },
    }),
    ...(m.caption !== undefined && { caption: m.caption }),
    ...(m.replyMarkup?.inline_keyboard
      ? { reply_markup: { inline_keyboard: m.replyMarkup.inline_keyboard } }
      : {}),
  };
}

/** In forums, messages in a topic "reply" to the topic's creation service message. */
export function topicRootMessage(chat: FakeChat, topic: number, creator: FakeUser): Json {
  return {
    message_id: topic,
    date: 1_700_000_000,
    chat,
    from: creator,
    message_thread_id: topic,
    is_topic_message: true,
    forum_topic_created: { name: `topic ${topic}`, icon_color: 7322096 },
  };
}

/**
 * Splits a multipart/form-data body. Hand-written because grammY writes `filename=x` unquoted
 * and without a space after the colon, which Telegram accepts but undici's FormData parser does not.
 */
function multipartParts(
  body: Buffer,
  contentType: string,
): { name: string; fileName?: string; data: Buffer }[] {
  const boundary = /boundary=("?)([^";]+)\1/.exec(contentType)?.[2];
  if (!boundary) throw bad('multipart body without boundary');
  const parts: { name: string; fileName?: string; data: Buffer }[] = [];
  const delimiter = Buffer.from(`--${boundary}`);
  let at = body.indexOf(delimiter);
  while (at >= 0) {
    const start = at + delimiter.length;
    if (body.subarray(start, start + 2).toString() === '--') break;
    const next = body.indexOf(delimiter, start);
    if (next < 0) break;
    const part = body.subarray(start + 2, next - 2); // skip the CRLFs around the part
    const split = part.indexOf('\r\n\r\n');
    const head = part.subarray(0, split).toString('utf8');
    const name = /name="([^"]*)"/i.exec(head)?.[1];
    const fileName = /filename="?([^";\r\n]*)"?/i.exec(head)?.[1];
    if (name !== undefined) {
      parts.push({
        name,
        data: part.subarray(split + 4),
        ...(fileName !== undefined && { fileName }),
      });
    }
    at = next;
  }
  return parts;
}
