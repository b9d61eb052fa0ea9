/**
 * Reads the last lines of a step's log for a checkpoint message. Only the file's tail is read,
 * without following a link planted in the workspace (then there is no tail, never the link's
 * target). ANSI colours and the runner's start line (server paths) are removed; JSON event lines (Claude stream-json, Codex --json) are
 * dropped except a final `result` text, so the tail shows what a human would want to read.
 */
import fs from 'node:fs';
import { openInside } from '../engine/ledger/safe-path.ts';

/** Options of `readLogTail`. */
export interface TailOptions {
  maxLines?: number;
  maxChars?: number;
  /** Bytes read from the end of the file. */
  maxBytes?: number;
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: matching ANSI escapes is the point.
const ANSI = /\u001b\[[0-9;?]*[ -/]*[@-~]/g;

/**
 * The last lines of the log at `path` inside the workspace `root`; undefined when it is missing,
 * refused (a planted link) or has no readable text.
 */
export async function readLogTail(
  root: string,
  path: string,
  opts: TailOptions = {},
): Promise<string | undefined> {
  const maxLines = opts.maxLines ?? 15;
  const maxChars = opts.maxChars ?? 1500;
  const maxBytes = opts.maxBytes ?? 16_384;
  let fd: number | undefined;
  try {
    fd = openInside(root, path, fs.constants.O_RDONLY);
    const { size } = fs.fstatSync(fd);
    const start = Math.max(0, size - maxBytes);
    const buf = Buffer.alloc(size - start);
    const got = fs.readSync(fd, buf, 0, buf.length, start);
    let lines = buf.subarray(0, got).toString('utf8').split('\n');
    // The first line may be cut in the middle (or mid-character) when reading from an offset.
    if (start > 0) lines = lines.slice(1);
    const kept = lines.map(readable).filter((l): l is string => l !== undefined && l.trim() !== '');
    const tail = kept.slice(-maxLines).join('\n');
    if (tail === '') return undefined;
    return tail.length > maxChars ? `…${tail.slice(tail.length - maxChars + 1)}` : tail;
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/** The line the runner writes when it starts an agent (src/jobs/runner/run-agent.ts). */
const RUNNER_START = /^\[phasebridge\] \S+ start agent=/;

/** A log line as shown: runner start lines dropped; colours removed; JSON events dropped unless they carry a result text. */
export function readable(line: string): string | undefined {
  const plain = line.replace(ANSI, '').replace(/\r$/, '');
  // The runner's start line names server paths (cwd, argv): the step log has it, chats do not.
  if (RUNNER_START.test(plain)) return undefined;
  const trimmed = plain.trim();
  if (!trimmed.startsWith('{') || !trimmed.endsWith('}')) return plain;
  try {
    const event = JSON.parse(trimmed) as { result?: unknown };
    return typeof event.result === 'string' ? event.result : undefined;
  } catch {
    return plain;
  }
}
