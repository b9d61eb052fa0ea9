/**
 * Platform-neutral helpers for `RichText`: building it, measuring it, and splitting it into chunks
 * a platform accepts. Pure functions; adapters turn the chunks into their own markup.
 */
import type { MessageField, RichSegment, RichText } from './messages.ts';

/** A plain-text segment. */
export const plain = (text: string): RichSegment => ({ kind: 'plain', text });
/** A bold segment. */
export const bold = (text: string): RichSegment => ({ kind: 'bold', text });
/** A monospace segment (multi-line code becomes a block where the platform has one). */
export const code = (text: string): RichSegment => ({ kind: 'code', text });
/** A hyperlink segment. */
export const link = (text: string, url: string): RichSegment => ({ kind: 'link', text, url });

/** A person's mention on `platform` (`id` their id there), shown as `name` everywhere else. */
export const mention = (name: string, platform: string, id: string): RichSegment => ({
  kind: 'mention',
  text: name,
  platform,
  id,
});

/** A field whose value is rich text (people as mentions); `value` is its plain text. */
export function richField(label: string, value: RichText): MessageField {
  return { label, value: plainTextOf(value), rich: value };
}

/**
 * RichText from prose that marks code the way people type it, between backticks: each `…` span
 * becomes a code segment, so no platform shows the backticks themselves. A lone backtick stays.
 */
export function prose(text: string): RichText {
  return rich(...text.split(/`([^`\n]+)`/).map((piece, i) => (i % 2 === 1 ? code(piece) : piece)));
}

/** Builds RichText from strings (plain) and segments. */
export function rich(...parts: readonly (string | RichSegment)[]): RichText {
  return parts.map((p) => (typeof p === 'string' ? plain(p) : p)).filter((s) => s.text !== '');
}

/** The visible text, without formatting. */
export function plainTextOf(text: RichText): string {
  return text.map((s) => s.text).join('');
}

/** The message body: the text, then one `label: value` line per field. */
export function composeBody(text: RichText, fields: readonly MessageField[] = []): RichText {
  if (fields.length === 0) return text;
  const lines = fields.flatMap((f, i) => [
    plain(i > 0 ? '\n' : ''),
    bold(`${f.label}:`),
    plain(' '),
    ...(f.rich ?? [plain(f.value)]),
  ]);
  return text.length > 0 ? rich(...text, '\n\n', ...lines) : rich(...lines);
}

/** Cuts the visible text at `[start, end)` and returns the segments covering it. */
export function sliceRichText(text: RichText, start: number, end: number): RichText {
  const out: RichSegment[] = [];
  let offset = 0;
  for (const seg of text) {
    const from = Math.max(start, offset);
    const to = Math.min(end, offset + seg.text.length);
    const piece = seg.text.slice(from - offset, to - offset);
    // A mention cut in two is its name in pieces: no piece may show the whole mention.
    const whole = seg.kind !== 'mention' || piece === seg.text;
    if (from < to) out.push(whole ? { ...seg, text: piece } : plain(piece));
    offset += seg.text.length;
  }
  return out;
}

const isHighSurrogate = (c: number): boolean => c >= 0xd800 && c <= 0xdbff;

/**
 * Where to end a chunk that starts at `start`: after the last newline in the window, else after
 * the last space, else at the limit (never inside a surrogate pair). Breaks in the first half of
 * the window are ignored so chunks stay reasonably full.
 */
function chunkEnd(s: string, start: number, max: number): number {
  const limit = start + max;
  if (s.length <= limit) return s.length;
  const window = s.slice(start, limit);
  for (const sep of ['\n', ' ']) {
    const at = window.lastIndexOf(sep);
    if (at >= max / 2) return start + at + 1;
  }
  return isHighSurrogate(s.charCodeAt(limit - 1)) ? limit - 1 : limit;
}

/**
 * Splits text into chunks of at most `maxLength` visible characters (UTF-16 units, as Telegram
 * and JavaScript count them). Concatenating the chunks' text gives back the input exactly.
 */
export function splitRichText(text: RichText, maxLength: number): RichText[] {
  if (maxLength < 2) throw new RangeError('maxLength must be at least 2');
  const s = plainTextOf(text);
  const chunks: RichText[] = [];
  for (let start = 0; start < s.length; ) {
    const end = chunkEnd(s, start, maxLength);
    chunks.push(sliceRichText(text, start, end));
    start = end;
  }
  return chunks;
}

/**
 * Splits like `splitRichText` but into at most `maxChunks`; when more are needed, the last chunk
 * is cut short and ends with a marker saying how much was left out (used for in-place edits).
 */
export function splitRichTextInto(
  text: RichText,
  maxLength: number,
  maxChunks: number,
): RichText[] {
  const chunks = splitRichText(text, maxLength);
  if (chunks.length <= maxChunks) return chunks;
  const kept = chunks.slice(0, maxChunks - 1);
  const restText = chunks.slice(maxChunks - 1).flat();
  const restLength = plainTextOf(restText).length;
  // Reserve room for the marker; its digits never exceed those of restLength.
  const marker = (shown: number) => `\n… (${restLength - shown} more characters not shown)`;
  const room = maxLength - marker(0).length;
  const shown = chunkEnd(plainTextOf(restText), 0, room);
  kept.push(rich(...sliceRichText(restText, 0, shown), marker(shown)));
  return kept;
}
