/**
 * Outbound rendering for Discord (pure): neutral messages become an embed (markdown description,
 * fields) plus action rows of buttons; long text is split over several messages. Also the modal
 * that asks for a reason, and the plain-text answers.
 */
import {
  type APIActionRowComponent,
  type APIAllowedMentions,
  type APIButtonComponentWithCustomId,
  type APIEmbed,
  type APIEmbedField,
  type APIModalInteractionResponseCallbackData,
  ButtonStyle,
  ComponentType,
  MessageFlags,
  type RESTPatchAPIChannelMessageJSONBody,
  type RESTPostAPIChannelMessageJSONBody,
  TextInputStyle,
} from 'discord.js';
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

/** Discord's limit on an embed description (markdown characters). */
export const MAX_DESCRIPTION = 4096;
/** Discord's limit on a message's content. */
export const MAX_CONTENT = 2000;
/** Discord's limit on a component `custom_id`. */
export const MAX_CUSTOM_ID = 100;
const MAX_EMBED_TOTAL = 6000;
const FIELDS_BUDGET = 1900;
const MAX_BUTTONS = 25;
const BUTTONS_PER_ROW = 5;
const MAX_LABEL = 80;

/** Custom ids starting with this are the adapter's own (the "give a reason" button and modal). */
export const RESERVED_ID_PREFIX = 'pb:';
/** Custom id of the reason modal (and its fallback button): the prefix + the press's interaction id. */
export const REASON_ID_PREFIX = 'pb:reason:';
/** Custom id of the modal's text input. */
export const REASON_INPUT_ID = 'reason';

/** No message of ours may ping anyone: user text can contain @everyone or <@id>. */
export const NO_MENTIONS: APIAllowedMentions = { parse: [] };

const MARKDOWN = /[\\*_~`|<>[\]()#]/g;
const LINE_START = /^(\s*)([-+]|\d+)(\.?)(?=\s)/gm;
const URL_RUN = /(https?:\/\/[^\s<]+)/;

/** Escapes Discord markdown; bare URLs stay as they are so they remain clickable. */
export function escapeMarkdown(text: string): string {
  return text
    .split(URL_RUN)
    .map((piece, i) =>
      i % 2 === 1
        ? piece
        : piece
            .replace(MARKDOWN, '\\$&')
            .replace(LINE_START, (all: string, space: string, mark: string, dot: string) =>
              // A list marker is escaped where it would format: `\-`, `\+`, `1\.`.
              dot ? `${space}${mark}\\.` : /\d/.test(mark) ? all : `${space}\\${mark}`,
            ),
    )
    .join('');
}

function safeUrl(url: string): string | undefined {
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'http:' || parsed.protocol === 'https:'
      ? parsed.href.replace(/\)/g, '%29')
      : undefined;
  } catch {
    return undefined;
  }
}

function renderCode(text: string): string {
  if (text.includes('\n')) return `\`\`\`\n${text.replace(/```/g, '`\u200b``')}\n\`\`\``;
  if (!text.includes('`')) return `\`${text}\``;
  return `\`\` ${text.replace(/``/g, '`\u200b`')} \`\``;
}

function renderSegment(seg: RichSegment): string {
  if (seg.text === '') return '';
  switch (seg.kind) {
    case 'plain':
      return escapeMarkdown(seg.text);
    case 'bold':
      return seg.text.trim() === '' ? seg.text : `**${escapeMarkdown(seg.text)}**`;
    case 'code':
      return renderCode(seg.text);
    case 'link': {
      // A javascript: or malformed URL is shown as plain text rather than linked.
      const url = safeUrl(seg.url);
      return url === undefined ? escapeMarkdown(seg.text) : `[${escapeMarkdown(seg.text)}](${url})`;
    }
    case 'mention':
      // Discord's own people by mention (never a ping: messages allow no mentions); others by name.
      return seg.platform === 'discord' && /^\d+$/.test(seg.id)
        ? `<@${seg.id}>`
        : escapeMarkdown(seg.text);
  }
}

/** Renders RichText to Discord markdown; all user-supplied text is escaped. */
export function renderMarkdown(text: RichText): string {
  return text.map(renderSegment).join('');
}

/** Cuts text so its escaped form fits `limit`, marking the cut with an ellipsis. */
export function fitEscaped(text: string, limit: number): string {
  if (escapeMarkdown(text).length <= limit) return escapeMarkdown(text);
  let chars = [...text];
  while (chars.length > 0 && escapeMarkdown(`${chars.join('')}…`).length > limit) {
    chars = chars.slice(0, Math.max(0, chars.length - Math.max(1, chars.length >> 4)));
  }
  return escapeMarkdown(`${chars.join('')}…`);
}

/** Embed fields within Discord's per-field limits and a budget that leaves room for the text. */
export function renderFields(fields: readonly MessageField[] = []): APIEmbedField[] {
  const out: APIEmbedField[] = [];
  let budget = FIELDS_BUDGET;
  for (const f of fields.slice(0, 25)) {
    const name = fitEscaped(f.label, Math.min(256, budget / 4)) || '\u200b';
    const room = Math.min(1024, budget - name.length);
    // People as mentions when the value fits whole; a cut could halve a `<@…>`, so else names.
    const md = f.rich === undefined ? undefined : renderMarkdown(f.rich);
    const value =
      (md !== undefined && md.length <= room ? md : fitEscaped(f.value, room)) || '\u200b';
    budget -= name.length + value.length;
    if (budget < 0) break;
    out.push({ name, value, inline: f.value.length <= 40 });
  }
  return out;
}

/**
 * The description of each part: visible chunks shrunk until their markdown fits the limit (escaping
 * can grow text). `maxParts` caps the count for edits, which cannot add messages.
 */
export function renderDescriptions(text: RichText, maxParts: number, limit = MAX_DESCRIPTION) {
  for (let size = limit; ; size = Math.floor(size * 0.75)) {
    const chunks = Number.isFinite(maxParts)
      ? splitRichTextInto(text, size, maxParts)
      : splitRichText(text, size);
    const rendered = chunks.map(renderMarkdown);
    if (rendered.every((r) => r.length <= limit)) return rendered;
    if (size < 128) return rendered.map((r) => r.slice(0, limit));
  }
}

const STYLES = {
  primary: ButtonStyle.Primary,
  danger: ButtonStyle.Danger,
  default: ButtonStyle.Secondary,
} as const;

/** Action rows of five buttons; refuses ids Discord would reject or that collide with ours. */
export function actionRows(
  buttons: readonly MessageButton[],
): APIActionRowComponent<APIButtonComponentWithCustomId>[] {
  if (buttons.length > MAX_BUTTONS) {
    throw new InvalidInputError(`at most ${MAX_BUTTONS} buttons fit a Discord message`);
  }
  const rows: APIActionRowComponent<APIButtonComponentWithCustomId>[] = [];
  for (const [i, b] of buttons.entries()) {
    if (b.id.length < 1 || b.id.length > MAX_CUSTOM_ID || b.id.startsWith(RESERVED_ID_PREFIX)) {
      throw new InvalidInputError(
        `button id must be 1-${MAX_CUSTOM_ID} characters not starting with ${RESERVED_ID_PREFIX} (${b.label})`,
      );
    }
    if (b.label.trim() === '') throw new InvalidInputError('button label is empty');
    const label =
      [...b.label].length > MAX_LABEL
        ? `${[...b.label].slice(0, MAX_LABEL - 1).join('')}…`
        : b.label;
    if (i % BUTTONS_PER_ROW === 0) rows.push({ type: ComponentType.ActionRow, components: [] });
    rows.at(-1)!.components.push({
      type: ComponentType.Button,
      style: STYLES[b.style ?? 'default'],
      label,
      custom_id: b.id,
    });
  }
  return rows;
}

/** One Discord message of a (possibly split) neutral message. */
export interface RenderedPart {
  readonly embed: APIEmbed;
  /** Only the last part carries the buttons; empty means "no buttons" (edits remove old ones). */
  readonly components: APIActionRowComponent<APIButtonComponentWithCustomId>[];
}

/**
 * Renders a message into embeds of at most 4096 markdown characters; the last part carries the
 * fields and the buttons. `maxParts` caps the count for edits: the tail is cut short with a marker.
 */
export function renderMessage(message: OutgoingMessage, maxParts = Infinity): RenderedPart[] {
  const fields = renderFields(message.fields);
  if (plainTextOf(message.text).trim() === '' && fields.length === 0) {
    throw new InvalidInputError('message text is empty');
  }
  const components = message.buttons ? actionRows(message.buttons) : [];
  const fieldsLength = fields.reduce((n, f) => n + f.name.length + f.value.length, 0);
  const limit = Math.min(MAX_DESCRIPTION, MAX_EMBED_TOTAL - fieldsLength);
  const descriptions =
    plainTextOf(message.text).trim() === ''
      ? ['']
      : renderDescriptions(message.text, maxParts, limit);
  return descriptions.map((description, i) => {
    const last = i === descriptions.length - 1;
    const embed: APIEmbed = {
      ...(description !== '' && { description }),
      ...(last && fields.length > 0 && { fields }),
    };
    return { embed, components: last ? components : [] };
  });
}

/** The body that posts one part; `silent` suppresses push and desktop notifications. */
export function postBody(
  part: RenderedPart,
  silent: boolean,
  nonce?: string,
): RESTPostAPIChannelMessageJSONBody {
  return {
    embeds: [part.embed],
    components: part.components,
    allowed_mentions: NO_MENTIONS,
    ...(silent && { flags: MessageFlags.SuppressNotifications }),
    // Discord answers a second post with the same nonce (minutes apart) with the first message.
    ...(nonce !== undefined && { nonce, enforce_nonce: true }),
  };
}

/** The body that replaces one part in place (content, embed and buttons). */
export function editBody(part: RenderedPart): RESTPatchAPIChannelMessageJSONBody {
  return {
    content: '',
    embeds: [part.embed],
    components: part.components,
    allowed_mentions: NO_MENTIONS,
  };
}

/** Plain text as message content: escaped and cut to Discord's 2000 characters. */
export function contentOf(text: string): string {
  return fitEscaped(text, MAX_CONTENT);
}

/** The public acknowledgement of a slash command: what was typed, as inline code. */
export function commandEcho(rawText: string): string {
  const shown = [...rawText].length > 300 ? `${[...rawText].slice(0, 299).join('')}…` : rawText;
  return renderCode(shown.replace(/\n/g, ' '));
}

/**
 * The modal asking for a reason: any private answers given just before it (Discord cannot show a
 * modal after a reply, so those are shown inside it), the prompt, and one paragraph input.
 */
export function reasonModal(
  interactionId: string,
  prompt: string,
  notes: readonly string[] = [],
  ask: ReasonAsk = {},
): APIModalInteractionResponseCallbackData {
  const text = [...notes, prompt].map((t) => escapeMarkdown(t)).join('\n\n');
  return {
    custom_id: `${REASON_ID_PREFIX}${interactionId}`,
    // Discord caps a modal title at 45 characters and a label at 45.
    title: (ask.title ?? 'Reason').slice(0, 45),
    components: [
      { type: ComponentType.TextDisplay, content: text.slice(0, 4000) },
      {
        type: ComponentType.Label,
        label: (ask.label ?? 'Reason').slice(0, 45),
        component: {
          type: ComponentType.TextInput,
          custom_id: REASON_INPUT_ID,
          style: TextInputStyle.Paragraph,
          // An optional field may be submitted empty (an approval without a comment).
          ...(ask.optional === true ? { required: false } : { required: true, min_length: 1 }),
          max_length: 1000,
        },
      },
    ],
  };
}

/** The prompt (and how it asks) kept for the fallback button; an older plain string is the prompt. */
export function keptPrompt(stored: string | undefined): { prompt: string; ask: ReasonAsk } {
  const fallback = { prompt: stored ?? 'Give your reason.', ask: {} };
  if (stored === undefined) return fallback;
  try {
    const kept = JSON.parse(stored) as { prompt?: unknown; ask?: ReasonAsk };
    if (typeof kept.prompt !== 'string') return fallback;
    return { prompt: kept.prompt, ask: typeof kept.ask === 'object' && kept.ask ? kept.ask : {} };
  } catch {
    return fallback;
  }
}

/** What keptPrompt reads back: the prompt and how the modal asks. */
export function keptPromptValue(prompt: string, ask: ReasonAsk = {}): string {
  return JSON.stringify({ prompt, ask });
}

/**
 * The button offered when a modal can no longer be opened directly (the press was answered),
 * named after what the modal asks: "Give a reason", or "Write your comment" (Approve with comment).
 */
export function reasonButtonRow(
  interactionId: string,
  ask: ReasonAsk = {},
): APIActionRowComponent<APIButtonComponentWithCustomId> {
  const label = ask.label === undefined ? 'Give a reason' : `Write your ${ask.label.toLowerCase()}`;
  return {
    type: ComponentType.ActionRow,
    components: [
      {
        type: ComponentType.Button,
        style: ButtonStyle.Primary,
        label: label.slice(0, 80),
        custom_id: `${REASON_ID_PREFIX}${interactionId}`,
      },
    ],
  };
}
