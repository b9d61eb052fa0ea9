/**
 * Reads the end of a file (step logs, ledgers) without loading a large file whole. A file that
 * does not exist yet is reported as missing, not as an error.
 */
import { open } from 'node:fs/promises';

/** The end of a file. */
export interface FileTail {
  readonly text: string;
  /** True when the file is longer than what was read. */
  readonly truncated: boolean;
  readonly missing: boolean;
}

/** The last `maxBytes` of a file, starting at a line boundary when it was cut. */
export async function readTail(file: string, maxBytes: number): Promise<FileTail> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(file, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
      return { text: '', truncated: false, missing: true };
    }
    throw err;
  }
  try {
    const { size } = await handle.stat();
    const start = Math.max(0, size - maxBytes);
    const buf = Buffer.alloc(size - start);
    await handle.read(buf, 0, buf.length, start);
    let text = buf.toString('utf8');
    // A cut in the middle of a line (or of a UTF-8 sequence) is dropped up to the next newline.
    if (start > 0) text = text.slice(text.indexOf('\n') + 1);
    return { text, truncated: start > 0, missing: false };
  } finally {
    await handle.close();
  }
}

/** The last `maxLines` lines of a file's tail (blank trailing line dropped). */
export async function readTailLines(
  file: string,
  maxLines: number,
  maxBytes: number,
): Promise<{ lines: string[]; truncated: boolean; missing: boolean }> {
  const tail = await readTail(file, maxBytes);
  const all = tail.text.split('\n');
  if (all.at(-1) === '') all.pop();
  const lines = all.slice(-maxLines);
  return { lines, truncated: tail.truncated || lines.length < all.length, missing: tail.missing };
}
