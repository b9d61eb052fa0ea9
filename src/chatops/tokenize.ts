/**
 * Splits a command's argument text into words, honouring quotes ("…", '…' and the typographic
 * “…” ‘…’ that phone keyboards insert). Pure. Each token keeps its position, so a handler can take
 * "the rest of the text" verbatim (specs and reasons keep their line breaks).
 */

/** One word of the argument text. */
export interface Token {
  /** The word without its quotes. */
  readonly value: string;
  /** Index of the token's first character (its opening quote, if quoted) in the text. */
  readonly start: number;
  /** Index just after the token (after its closing quote). */
  readonly end: number;
  readonly quoted: boolean;
}

const CLOSING: Readonly<Record<string, string>> = {
  '"': '"',
  "'": "'",
  '“': '”',
  '„': '“',
  '‘': '’',
  '«': '»',
};

const isSpace = (c: string): boolean => /\s/.test(c);

/**
 * The tokens of `text`. A quote opens a quoted token only at the start of a word (so "it's"
 * stays one word); an unterminated quote is taken literally.
 */
export function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    while (i < text.length && isSpace(text[i]!)) i++;
    if (i >= text.length) break;
    const start = i;
    const close = CLOSING[text[i]!];
    const end = close === undefined ? -1 : text.indexOf(close, i + 1);
    // A quoted token must end at a word boundary, else the quote is a literal character.
    if (close !== undefined && end > i && (end + 1 >= text.length || isSpace(text[end + 1]!))) {
      tokens.push({ value: text.slice(i + 1, end), start, end: end + 1, quoted: true });
      i = end + 1;
      continue;
    }
    while (i < text.length && !isSpace(text[i]!)) i++;
    tokens.push({ value: text.slice(start, i), start, end: i, quoted: false });
  }
  return tokens;
}

/**
 * The text from token `index` to the end: a single quoted token gives its unquoted value,
 * anything else the original text verbatim (trimmed). Undefined when there is nothing left.
 */
export function restOf(text: string, tokens: readonly Token[], index: number): string | undefined {
  const first = tokens[index];
  if (first === undefined) return undefined;
  if (index === tokens.length - 1 && first.quoted) return first.value;
  return text.slice(first.start).trim();
}
