/**
 * Reading a `.codexclaw/` that codexclaw itself writes, read-only: the ledger rows appended since
 * an offset. Files are opened without following symlinks (the workspace is untrusted); a last line
 * without its newline is a row still being written and is left for the next read. Rows are kept
 * whole (unknown fields included): we only read them, never write codexclaw's files.
 */
import fs from 'node:fs';
import path from 'node:path';
import { openInside } from '../../ledger/safe-path.ts';
import { CODEXCLAW_DIR } from './format.ts';

/** At most this many bytes are read per call; the rest comes at the next one. */
const MAX_READ = 1 << 20;

/** The ledger rows read, and where the next read starts. */
export interface LedgerTail {
  /** Parsed rows (objects only), every field kept. */
  readonly rows: Record<string, unknown>[];
  /** Lines that were not JSON objects (skipped, as codexclaw's readers do). */
  readonly skipped: number;
  /** Byte offset after the last complete line read. */
  readonly next: number;
  /** True when the file was shorter than `offset` (cut back or replaced): nothing is announced. */
  readonly reset: boolean;
}

/** True when the workspace has a `.codexclaw/` folder (a real one, not a link). */
export function hasCodexclaw(workspace: string): boolean {
  const st = fs.lstatSync(path.join(path.resolve(workspace), CODEXCLAW_DIR), {
    throwIfNoEntry: false,
  });
  return st?.isDirectory() === true;
}

/** The complete rows of `.codexclaw/ledger.jsonl` from byte `offset` on. */
export function readLedgerTail(workspace: string, offset: number): LedgerTail {
  const root = path.resolve(workspace);
  const file = path.join(root, CODEXCLAW_DIR, 'ledger.jsonl');
  let fd: number;
  try {
    fd = openInside(root, file, fs.constants.O_RDONLY);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
      return { rows: [], skipped: 0, next: offset, reset: false };
    }
    throw err;
  }
  try {
    const size = fs.fstatSync(fd).size;
    if (size < offset) {
      return { rows: [], skipped: 0, next: completeEnd(fd, 0, size), reset: true };
    }
    const buf = readRange(fd, offset, Math.min(size - offset, MAX_READ));
    const end = buf.lastIndexOf(0x0a) + 1;
    const rows: Record<string, unknown>[] = [];
    let skipped = 0;
    for (const line of buf.subarray(0, end).toString('utf8').split('\n')) {
      if (line.trim() === '') continue;
      const row = parseRow(line);
      if (row === null) skipped++;
      else rows.push(row);
    }
    return { rows, skipped, next: offset + end, reset: false };
  } finally {
    fs.closeSync(fd);
  }
}

/** Where following the workspace starts: after the ledger's last complete line (0 without one). */
export function ledgerEnd(workspace: string): number {
  let offset = 0;
  for (;;) {
    const tail = readLedgerTail(workspace, offset);
    if (tail.next === offset) return offset;
    offset = tail.next;
  }
}

function readRange(fd: number, offset: number, length: number): Buffer {
  const buf = Buffer.alloc(length);
  let got = 0;
  while (got < length) {
    const n = fs.readSync(fd, buf, got, length - got, offset + got);
    if (n === 0) break;
    got += n;
  }
  return buf.subarray(0, got);
}

/** The offset after the last newline in [from, size). */
function completeEnd(fd: number, from: number, size: number): number {
  let end = from;
  for (let at = from; at < size; at += MAX_READ) {
    const buf = readRange(fd, at, Math.min(MAX_READ, size - at));
    const nl = buf.lastIndexOf(0x0a);
    if (nl >= 0) end = at + nl + 1;
  }
  return end;
}

function parseRow(line: string): Record<string, unknown> | null {
  try {
    const v: unknown = JSON.parse(line);
    return v !== null && typeof v === 'object' && !Array.isArray(v)
      ? (v as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}
