/**
 * Reads the end of a file (step logs, ledgers) without loading a large file whole. A file that
 * does not exist yet is reported as missing, not as an error. The file lies in a workspace, which
 * agents control: it is opened without following a link below `root` (a planted one throws
 * UnsafePathError naming it), so the console never shows a file from outside the workspace.
 */
import fs from 'node:fs';
import { openInside } from '../../engine/ledger/safe-path.ts';

/** The end of a file. */
export interface FileTail {
  readonly text: string;
  /** True when the file is longer than what was read. */
  readonly truncated: boolean;
  readonly missing: boolean;
  /** The file's size when read (where a follower goes on from). */
  readonly size: number;
}

/** The last `maxBytes` of `file` inside `root`, starting at a line boundary when it was cut. */
export async function readTail(root: string, file: string, maxBytes: number): Promise<FileTail> {
  let fd: number;
  try {
    fd = openInside(root, file, fs.constants.O_RDONLY);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
      return { text: '', truncated: false, missing: true, size: 0 };
    }
    throw err;
  }
  try {
    // Synchronous reads of at most maxBytes: the open had to be synchronous (no-follow checks).
    const { size } = fs.fstatSync(fd);
    const start = Math.max(0, size - maxBytes);
    const buf = Buffer.alloc(size - start);
    let got = 0;
    while (got < buf.length) {
      const n = fs.readSync(fd, buf, got, buf.length - got, start + got);
      if (n === 0) break;
      got += n;
    }
    let text = buf.subarray(0, got).toString('utf8');
    // A cut in the middle of a line (or of a UTF-8 sequence) is dropped up to the next newline.
    if (start > 0) text = text.slice(text.indexOf('\n') + 1);
    return { text, truncated: start > 0, missing: false, size: start + got };
  } finally {
    fs.closeSync(fd);
  }
}

/** The last `maxLines` lines of the tail of `file` inside `root` (blank trailing line dropped). */
export async function readTailLines(
  root: string,
  file: string,
  maxLines: number,
  maxBytes: number,
): Promise<{ lines: string[]; truncated: boolean; missing: boolean }> {
  const tail = await readTail(root, file, maxBytes);
  const all = tail.text.split('\n');
  if (all.at(-1) === '') all.pop();
  const lines = all.slice(-maxLines);
  return { lines, truncated: tail.truncated || lines.length < all.length, missing: tail.missing };
}

/**
 * What was appended to `file` since byte `from` (at most `maxBytes`, cut at the last newline so
 * no line or UTF-8 sequence is split), and where to go on from. A file that shrank is re-read.
 */
export async function readFrom(
  root: string,
  file: string,
  from: number,
  maxBytes: number,
): Promise<{ text: string; next: number; missing: boolean }> {
  let fd: number;
  try {
    fd = openInside(root, file, fs.constants.O_RDONLY);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT')
      return { text: '', next: 0, missing: true };
    throw err;
  }
  try {
    const { size } = fs.fstatSync(fd);
    const start = from > size ? 0 : from;
    const buf = Buffer.alloc(Math.min(maxBytes, size - start));
    const got = buf.length === 0 ? 0 : fs.readSync(fd, buf, 0, buf.length, start);
    let chunk = buf.subarray(0, got);
    const lastNewline = chunk.lastIndexOf(10);
    if (lastNewline >= 0) chunk = chunk.subarray(0, lastNewline + 1);
    else if (got < maxBytes) chunk = chunk.subarray(0, 0); // wait for the line to end
    return { text: chunk.toString('utf8'), next: start + chunk.length, missing: false };
  } finally {
    fs.closeSync(fd);
  }
}
