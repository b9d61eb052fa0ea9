/**
 * Reading flow's `events.jsonl`: one JSON object a line; a line that does not parse (a torn
 * write at the end, a foreign line) is skipped, as flow's iron law asks of every reader.
 * Appending: whole lines in one write, fsynced, starting on a new line after a torn one.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fsyncDir } from '../../ledger/atomic-write.ts';
import { openInside, STATE_FILE_MODE } from '../../ledger/safe-path.ts';

/** The parseable JSON-object lines of an events.jsonl text, in order. */
export function readEventsJsonl(text: string): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    try {
      const v = JSON.parse(line) as unknown;
      if (v !== null && typeof v === 'object' && !Array.isArray(v))
        out.push(v as Record<string, unknown>);
    } catch {
      // Unparseable (usually a trailing line a crashed writer left): skipped, never fatal.
    }
  }
  return out;
}

/** The text that appends `lines` after `existing` (a torn last line gets its newline first). */
export function eventsText(existing: string | null, lines: readonly Record<string, unknown>[]) {
  if (lines.length === 0) return '';
  const lead = existing !== null && existing !== '' && !existing.endsWith('\n') ? '\n' : '';
  return lead + lines.map((l) => `${JSON.stringify(l)}\n`).join('');
}

/**
 * Appends `lines` to the events file (`existing`: its current text, null when absent), opened
 * without following a link, in one write, fsynced. Returns the text appended ('' when none).
 */
export function appendEventsJsonl(
  workspace: string,
  file: string,
  existing: string | null,
  lines: readonly Record<string, unknown>[],
): string {
  const text = eventsText(existing, lines);
  if (text === '') return '';
  const fd = openInside(
    workspace,
    file,
    fs.constants.O_WRONLY | fs.constants.O_APPEND | fs.constants.O_CREAT,
    STATE_FILE_MODE,
  );
  try {
    fs.writeSync(fd, text);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  if (existing === null) fsyncDir(path.dirname(file));
  return text;
}
