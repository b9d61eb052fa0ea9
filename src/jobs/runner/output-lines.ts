import { StringDecoder } from 'node:string_decoder';

/** Longest line kept for parsing; longer ones are cut so one runaway line cannot eat memory. */
export const MAX_LINE_CHARS = 2 * 1024 * 1024;

/** Splits a byte stream into text lines (UTF-8 safe across chunks, `\r\n` tolerated). */
export class LineSplitter {
  private readonly decoder = new StringDecoder('utf8');
  private readonly onLine: (line: string) => void;
  private readonly maxChars: number;
  private buffer = '';
  private skipping = false;

  constructor(onLine: (line: string) => void, maxChars = MAX_LINE_CHARS) {
    this.onLine = onLine;
    this.maxChars = maxChars;
  }

  /** Feeds one chunk; calls onLine for every complete line in it. */
  push(chunk: Buffer): void {
    this.take(this.decoder.write(chunk));
  }

  /** Ends the stream; a last line without newline is emitted. */
  flush(): void {
    this.take(this.decoder.end());
    if (this.buffer.length > 0 && !this.skipping) this.emit(this.buffer);
    this.buffer = '';
    this.skipping = false;
  }

  private take(text: string): void {
    let start = 0;
    for (let nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n', start)) {
      const piece = text.slice(start, nl);
      if (!this.skipping) this.emit(this.buffer + piece);
      this.buffer = '';
      this.skipping = false;
      start = nl + 1;
    }
    if (this.skipping) return;
    this.buffer += text.slice(start);
    if (this.buffer.length > this.maxChars) {
      // Emit the head of an overlong line once, then skip to its end.
      this.emit(this.buffer.slice(0, this.maxChars));
      this.buffer = '';
      this.skipping = true;
    }
  }

  private emit(line: string): void {
    this.onLine(line.endsWith('\r') ? line.slice(0, -1) : line);
  }
}

/** Keeps the last `size` lines, each cut to `maxChars`. */
export class TailBuffer {
  private readonly lines: string[] = [];
  private readonly size: number;
  private readonly maxChars: number;

  constructor(size = 20, maxChars = 1000) {
    this.size = size;
    this.maxChars = maxChars;
  }

  /** Adds one line, dropping the oldest beyond `size`. */
  push(line: string): void {
    this.lines.push(line.length > this.maxChars ? `${line.slice(0, this.maxChars)}…` : line);
    if (this.lines.length > this.size) this.lines.shift();
  }

  /** The kept lines, oldest first. */
  toArray(): string[] {
    return [...this.lines];
  }
}

/** The text of a `::progress <text>` line, or null for any other line. */
export function parseProgressLine(line: string): string | null {
  const m = /^::progress(?:\s+(.*))?$/.exec(line);
  if (!m) return null;
  const text = (m[1] ?? '').trim();
  return text.length > 0 ? text : null;
}
