/**
 * Outbound side of the Slack adapter, pure: chat/message refs, and rendering neutral messages to
 * Block Kit (mrkdwn sections, field sections, an actions block of buttons) and the reason modal.
 */
import { createHash } from 'node:crypto';
import type { types } from '@slack/bolt';
import { InvalidInputError } from '../../errors.ts';
import type { ReasonAsk } from '../channel.ts';
import type {
  MessageButton,
  MessageField,
  OutgoingMessage,
  RichSegment,
  RichText,
} from '../messages.ts';
import { plainTextOf, splitRichText, splitRichTextInto } from '../render-text.ts';

/** Visible characters per Slack message; longer text is split into several messages. */
export const MAX_TEXT_LENGTH = 6000;
/** Slack's limit on a section's text, counted after mrkdwn escaping. */
export const MAX_SECTION_TEXT = 3000;
/**
 * The most mrkdwn one message's sections carry together. Slack answers `msg_blocks_too_long` past
 * about 13 000 (undocumented; slackapi/bolt-js#2509) and documents 12 000 for one markdown block:
 * text heavy with `&`, `<`, `>` or links grows up to five times when escaped, so a message of
 * MAX_TEXT_LENGTH visible characters is split further rather than refused.
 */
export const MAX_BLOCKS_TEXT = 12_000;
/** Slack's limit on an `action_id`; the button's opaque id is sent as the action_id. */
export const MAX_ACTION_ID_LENGTH = 255;
const MAX_BUTTON_LABEL = 75;
const MAX_FIELD_TEXT = 2000;
const FIELDS_PER_SECTION = 10;
const BUTTONS_PER_ACTIONS_BLOCK = 25;
/** The fallback `text` only feeds notifications and screen readers. */
const MAX_FALLBACK_TEXT = 1000;

/** A Slack conversation in one workspace, and a thread (the parent message's ts) in it. */
export interface SlackChat {
  readonly team: string;
  readonly channel: string;
  readonly thread?: string;
}

const TS = /^\d{1,12}\.\d{1,8}$/;
const CHAT_REF = /^slack:([A-Za-z0-9]{1,40}):([A-Za-z0-9]{1,40})(?::(\d{1,12}\.\d{1,8}))?$/;

/** `slack:<team>:<channel>[:<thread_ts>]`. */
export function formatChatRef(chat: SlackChat): string {
  const base = `slack:${chat.team}:${chat.channel}`;
  return chat.thread === undefined ? base : `${base}:${chat.thread}`;
}

/**
 * What an answer posted as a message is about: the pressed message, the presser and the text. A
 * press pressed again for the same answer, or redelivered, posts it once (the outbox's key).
 */
export function answerKey(messageTs: string, userId: string, text: string): string {
  const digest = createHash('sha256').update(text).digest('base64url').slice(0, 16);
  return `press:${messageTs}:${userId}:${digest}`;
}

/** Parses a chat ref; anything else (channel names like #ops included) is INVALID_INPUT. */
export function parseChatRef(ref: string): SlackChat {
  const m = CHAT_REF.exec(ref);
  if (!m) throw new InvalidInputError(`not a Slack chat ref: ${JSON.stringify(ref)}`);
  const [, team, channel, thread] = m as unknown as [string, string, string, string | undefined];
  return thread === undefined ? { team, channel } : { team, channel, thread };
}

/** Parses a neutral thread string (a message ts such as `1531420618.000100`). */
export function parseThread(thread: string): string {
  if (!TS.test(thread)) throw new InvalidInputError(`not a Slack thread ts: ${thread}`);
  return thread;
}

/** `<chat ref>/<ts>[,<ts>...]`: a message, or every part of a split message. */
export function formatMessageRef(chat: SlackChat, ts: readonly string[]): string {
  return `${formatChatRef(chat)}/${ts.join(',')}`;
}

/** The ref `askForReason` returns: the modal's view id, not a message. */
export function formatPromptRef(chat: SlackChat, viewId: string): string {
  return `${formatChatRef(chat)}/view:${viewId}`;
}

/** The ref `sendFile` returns: the uploaded file's id. */
export function formatFileRef(chat: SlackChat, fileId: string): string {
  return `${formatChatRef(chat)}/file:${fileId}`;
}

/** Parses a message ref from `formatMessageRef`; prompt and file refs cannot be edited. */
export function parseMessageRef(ref: string): { chat: SlackChat; ts: string[] } {
  const slash = ref.lastIndexOf('/');
  const tail = slash < 0 ? '' : ref.slice(slash + 1);
  if (tail.startsWith('view:') || tail.startsWith('file:')) {
    throw new InvalidInputError(
      `${JSON.stringify(ref)} is a modal or a file, not an editable message`,
    );
  }
  const ts = tail.split(',');
  if (tail === '' || !ts.every((t) => TS.test(t))) {
    throw new InvalidInputError(`not a Slack message ref: ${JSON.stringify(ref)}`);
  }
  return { chat: parseChatRef(ref.slice(0, slash)), ts };
}

/**
 * `chat` with the thread a reply to message `replyTo` goes in: the thread the message is in, else
 * the thread under it (`thread_ts` = its first part's ts). Unchanged for another conversation's message.
 */
export function replyThread(chat: SlackChat, replyTo: string): SlackChat {
  const to = parseMessageRef(replyTo);
  if (to.chat.team !== chat.team || to.chat.channel !== chat.channel) return chat;
  return { ...chat, thread: to.chat.thread ?? to.ts[0]! };
}

/** Escapes the three characters Slack's mrkdwn treats as control characters. */
function escapeMrkdwn(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

const LINK_PROTOCOLS = new Set(['http:', 'https:', 'mailto:']);

/** The URL as it may appear inside `<url|label>`, or undefined for javascript: and junk. */
function linkUrl(url: string): string | undefined {
  try {
    if (!LINK_PROTOCOLS.has(new URL(url).protocol)) return undefined;
  } catch {
    return undefined;
  }
  return escapeMrkdwn(url).replace(/\|/g, '%7C');
}

/** Wraps text in a mrkdwn marker; Slack only formats when the marker hugs non-space characters. */
function wrap(text: string, marker: string): string {
  const m = /^(\s*)([\s\S]*?)(\s*)$/.exec(text)!;
  const [, lead, core, trail] = m as unknown as [string, string, string, string];
  return core === '' ? text : `${lead}${marker}${core}${marker}${trail}`;
}

function renderSegment(seg: RichSegment): string {
  const escaped = escapeMrkdwn(seg.text);
  switch (seg.kind) {
    case 'plain':
      return escaped;
    case 'bold':
      return wrap(escaped, '*');
    case 'code':
      // Slack has no escape for a backtick inside code; a look-alike keeps the span intact.
      return seg.text.includes('\n')
        ? `\`\`\`\n${escaped.replace(/```/g, 'ˋˋˋ')}\n\`\`\``
        : wrap(escaped.replace(/`/g, 'ˋ'), '`');
    case 'link': {
      const url = linkUrl(seg.url);
      return url === undefined ? escaped : `<${url}|${escaped}>`;
    }
    case 'mention':
      // Slack's own people by mention (the client shows their current name); others by name.
      return seg.platform === 'slack' && /^[A-Z0-9]+$/i.test(seg.id) ? `<@${seg.id}>` : escaped;
  }
}

/** Renders RichText to mrkdwn; all text is escaped so `<!channel>` and links cannot be injected. */
export function renderMrkdwn(text: RichText): string {
  return text.map(renderSegment).join('');
}

/** Splits text into mrkdwn strings that each fit a section, even after escaping grew them. */
export function renderSections(text: RichText): string[] {
  const fit = (chunk: RichText): string[] => {
    const md = renderMrkdwn(chunk);
    if (md.length <= MAX_SECTION_TEXT) return plainTextOf(chunk).trim() === '' ? [] : [md];
    const half = Math.max(2, Math.floor(plainTextOf(chunk).length / 2));
    return splitRichText(chunk, half).flatMap(fit);
  };
  return splitRichText(text, MAX_SECTION_TEXT).flatMap(fit);
}

const cut = (s: string, max: number): string =>
  [...s].length <= max ? s : `${[...s].slice(0, max - 1).join('')}…`;

/** A Block Kit block. */
export type Block = types.KnownBlock;

/** A field's value as mrkdwn: its people as mentions when it fits whole, else its plain text. */
function fieldValue(f: MessageField): string {
  const md = f.rich === undefined ? undefined : renderMrkdwn(f.rich);
  // A cut could halve a `<@U…>`: a value too long for mentions is shown as names.
  return md !== undefined && md.length + f.label.length < MAX_FIELD_TEXT - 8
    ? md
    : escapeMrkdwn(f.value);
}

function fieldBlocks(fields: readonly MessageField[]): Block[] {
  const blocks: Block[] = [];
  for (let i = 0; i < fields.length; i += FIELDS_PER_SECTION) {
    const texts = fields.slice(i, i + FIELDS_PER_SECTION).map((f) => ({
      type: 'mrkdwn' as const,
      text: cut(`${wrap(escapeMrkdwn(f.label), '*')}\n${fieldValue(f)}`, MAX_FIELD_TEXT),
    }));
    blocks.push({ type: 'section', fields: texts });
  }
  return blocks;
}

/** The actions blocks of the buttons; refuses ids Slack would reject instead of sending them. */
export function buttonBlocks(buttons: readonly MessageButton[]): Block[] {
  const seen = new Set<string>();
  const elements = buttons.map((b): types.Button => {
    if (b.id.length < 1 || b.id.length > MAX_ACTION_ID_LENGTH) {
      throw new InvalidInputError(
        `button id must be 1-${MAX_ACTION_ID_LENGTH} characters, got ${b.id.length} (${b.label})`,
      );
    }
    if (seen.has(b.id)) throw new InvalidInputError(`duplicate button id (${b.label})`);
    seen.add(b.id);
    if (b.label.trim() === '') throw new InvalidInputError('button label is empty');
    return {
      type: 'button',
      action_id: b.id,
      text: { type: 'plain_text', text: cut(b.label, MAX_BUTTON_LABEL), emoji: true },
      ...(b.style === 'primary' || b.style === 'danger' ? { style: b.style } : {}),
    };
  });
  const blocks: Block[] = [];
  for (let i = 0; i < elements.length; i += BUTTONS_PER_ACTIONS_BLOCK) {
    blocks.push({ type: 'actions', elements: elements.slice(i, i + BUTTONS_PER_ACTIONS_BLOCK) });
  }
  return blocks;
}

/** One Slack message of a (possibly split) neutral message. */
export interface RenderedPart {
  /** Plain fallback for notifications; Slack shows the blocks. */
  readonly text: string;
  readonly blocks: Block[];
  /** The text this part shows, so a part Slack refuses as too long can be split again. */
  readonly source: RichText;
  /** The fields and buttons under this part (the last one only). */
  readonly tail: Block[];
}

/** One part: `chunk` as sections, then `tail`. */
function renderPart(chunk: RichText, tail: Block[]): RenderedPart {
  return {
    text: escapeMrkdwn(cut(plainTextOf(chunk), MAX_FALLBACK_TEXT)),
    blocks: [
      ...renderSections(chunk).map(
        (md): Block => ({ type: 'section', text: { type: 'mrkdwn', text: md } }),
      ),
      ...tail,
    ],
    source: chunk,
    tail,
  };
}

/** Splits a part Slack refused as too long into two, the tail under the second. */
export function halvePart(part: RenderedPart): RenderedPart[] {
  const size = Math.max(2, Math.ceil(plainTextOf(part.source).length / 2));
  const chunks = splitRichText(part.source, size);
  return chunks.map((chunk, i) => renderPart(chunk, i === chunks.length - 1 ? part.tail : []));
}

/** Splits a chunk until its sections carry at most MAX_BLOCKS_TEXT of mrkdwn together. */
function fitBlocks(chunk: RichText): RichText[] {
  const total = renderSections(chunk).reduce((n, md) => n + md.length, 0);
  if (total <= MAX_BLOCKS_TEXT) return [chunk];
  const pieces = Math.ceil(total / MAX_BLOCKS_TEXT);
  const size = Math.max(2, Math.ceil(plainTextOf(chunk).length / pieces));
  return splitRichText(chunk, size).flatMap(fitBlocks);
}

/**
 * Renders a message into parts of at most MAX_TEXT_LENGTH visible characters (and
 * MAX_BLOCKS_TEXT of mrkdwn) each; the last part carries the fields and the buttons. `maxParts`
 * caps the count for edits, which cannot add messages: the tail is cut short with a marker.
 */
export function renderMessage(message: OutgoingMessage, maxParts = Infinity): RenderedPart[] {
  if (plainTextOf(message.text).trim() === '') throw new InvalidInputError('message text is empty');
  const tail = [...fieldBlocks(message.fields ?? []), ...buttonBlocks(message.buttons ?? [])];
  const chunks = Number.isFinite(maxParts)
    ? splitRichTextInto(message.text, MAX_TEXT_LENGTH, maxParts)
    : splitRichText(message.text, MAX_TEXT_LENGTH).flatMap(fitBlocks);
  return chunks.map((chunk, i) => renderPart(chunk, i === chunks.length - 1 ? tail : []));
}

/** The modal's callback_id; a view_submission with it becomes a Reply. */
export const REASON_CALLBACK_ID = 'phasebridge_reason';
/** Where the reason's text is found in the submitted view's state. */
export const REASON_BLOCK_ID = 'reason';
/** The input element's action_id inside REASON_BLOCK_ID. */
export const REASON_ACTION_ID = 'text';

/** The modal `askForReason` opens; `privateMetadata` comes back verbatim on submission. */
export function reasonModal(
  prompt: string,
  privateMetadata: string,
  ask: ReasonAsk = {},
): types.ModalView {
  const text = prompt.trim() === '' ? 'Why?' : cut(prompt, MAX_SECTION_TEXT);
  return {
    type: 'modal',
    callback_id: REASON_CALLBACK_ID,
    // Slack caps a modal title at 24 characters.
    title: { type: 'plain_text', text: cut(ask.title ?? 'Reason', 24) },
    submit: { type: 'plain_text', text: 'Send' },
    close: { type: 'plain_text', text: 'Cancel' },
    private_metadata: privateMetadata,
    blocks: [
      { type: 'section', text: { type: 'plain_text', text } },
      {
        type: 'input',
        block_id: REASON_BLOCK_ID,
        label: { type: 'plain_text', text: cut(ask.label ?? 'Reason', 2000) },
        // An optional input lets Send go with the field empty (its value then comes back null).
        ...(ask.optional === true && { optional: true }),
        element: {
          type: 'plain_text_input',
          action_id: REASON_ACTION_ID,
          multiline: true,
          max_length: MAX_SECTION_TEXT,
        },
      },
    ],
  };
}
