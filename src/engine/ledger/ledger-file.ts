/**
 * The ledger file (`ledger.jsonl`): reading with crash-damage detection, and appending with fsync.
 * A line counts only once its newline is on disk: a damaged LAST line is a torn append (dropped,
 * reported, truncated away before the next append); a damaged line before it is corruption.
 */
import fs from 'node:fs';
import { fsyncAsync, lstatNoSymlink } from './atomic-write.ts';
import { type LedgerEntry, parseLedgerLine } from './ledger-format.ts';

const { O_WRONLY, O_APPEND, O_CREAT, O_NOFOLLOW, O_RDONLY } = fs.constants;

/** A torn last line that was skipped. */
export interface TornTail {
  /** 1-based line number. */
  line: number;
  /** Bytes dropped. */
  bytes: number;
  reason: string;
}

/** A damaged line before the last one: the run must be blocked, not reset. */
export interface CorruptLine {
  /** 1-based line number. */
  line: number;
  reason: string;
}

/** What {@link readLedger} found. */
export interface LedgerRead<E, F> {
  /** Good entries in order (only those before a corrupt line, if any). */
  entries: LedgerEntry<E, F>[];
  /** Byte length of the good prefix (the file is truncated to this before the next append). */
  goodBytes: number;
  /** End offset (after the newline) of each good entry's line. */
  ends: number[];
  /** Size of the file as read. */
  fileBytes: number;
  tornTail?: TornTail;
  corrupt?: CorruptLine;
}

const NEWLINE = 0x0a;

/** Reads and validates a ledger; a missing file reads as empty. Never modifies the file. */
export function readLedger<E = unknown, F = unknown>(file: string): LedgerRead<E, F> {
  const st = lstatNoSymlink(file);
  if (st === null) return { entries: [], goodBytes: 0, ends: [], fileBytes: 0 };
  const fd = fs.openSync(file, O_RDONLY | O_NOFOLLOW);
  let buf: Buffer;
  try {
    buf = fs.readFileSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  return parseLedger<E, F>(buf);
}

/** Splits and validates ledger bytes (pure; exported for tests and tools). */
export function parseLedger<E = unknown, F = unknown>(buf: Buffer): LedgerRead<E, F> {
  const entries: LedgerEntry<E, F>[] = [];
  const ends: number[] = [];
  const keys = new Set<string>();
  let start = 0;
  let line = 0;
  let prevSeq = -1;
  while (start < buf.length) {
    line++;
    const nl = buf.indexOf(NEWLINE, start);
    const end = nl === -1 ? buf.length : nl;
    const isLast = nl === -1 || nl + 1 >= buf.length;
    const text = buf.toString('utf8', start, end);
    const checked = checkLine<E, F>(text, nl === -1, prevSeq, keys);
    if ('reason' in checked) {
      const result = { entries, ends, goodBytes: start, fileBytes: buf.length };
      const { reason } = checked;
      // Only damage a crash can cause, and only on the last line, is a torn append.
      if (isLast && checked.crashDamage) {
        return { ...result, tornTail: { line, bytes: buf.length - start, reason } };
      }
      return { ...result, corrupt: { line, reason } };
    }
    entries.push(checked);
    keys.add(checked.key);
    prevSeq = checked.seq;
    start = end + 1;
    ends.push(start);
  }
  return { entries, ends, goodBytes: buf.length, fileBytes: buf.length };
}

function checkLine<E, F>(
  text: string,
  unterminated: boolean,
  prevSeq: number,
  keys: ReadonlySet<string>,
): LedgerEntry<E, F> | { reason: string; crashDamage: boolean } {
  if (unterminated)
    return { reason: 'line has no newline (append interrupted)', crashDamage: true };
  if (text.trim() === '') return { reason: 'empty line', crashDamage: true };
  const parsed = parseLedgerLine<E, F>(text);
  if (!parsed.ok) return { reason: parsed.reason, crashDamage: true };
  const { seq, key } = parsed.entry;
  if (seq < prevSeq)
    return { reason: `seq ${seq} goes back (previous ${prevSeq})`, crashDamage: false };
  if (keys.has(key)) return { reason: `idempotency key ${key} appears twice`, crashDamage: false };
  return parsed.entry;
}

/**
 * Appends lines to one ledger, each made durable (fsync) before `append` resolves. The fsync runs
 * on libuv's thread pool: the line is acknowledged only once it is on disk, while the bridge's
 * thread goes on with other runs meanwhile.
 */
export class LedgerWriter {
  readonly #fd: number;
  #closed = false;
  /** fsyncs in flight on the thread pool. */
  #syncing = 0;

  private constructor(fd: number) {
    this.#fd = fd;
  }

  /**
   * Opens `file` for appending (created when missing; a symlink is refused by O_NOFOLLOW).
   * When the file is longer than `goodBytes` (a torn tail was found), it is truncated back first.
   */
  static open(file: string, goodBytes: number): LedgerWriter {
    const fd = fs.openSync(file, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW, 0o600);
    try {
      if (fs.fstatSync(fd).size > goodBytes) {
        fs.ftruncateSync(fd, goodBytes);
        fs.fsyncSync(fd);
      }
    } catch (err) {
      fs.closeSync(fd);
      throw err;
    }
    return new LedgerWriter(fd);
  }

  /** Writes one line (with its newline); resolves once it is fsynced. */
  async append(line: string): Promise<void> {
    if (this.#closed) throw new Error('ledger writer is closed');
    const buf = Buffer.from(line, 'utf8');
    let off = 0;
    while (off < buf.length) off += fs.writeSync(this.#fd, buf, off, buf.length - off);
    this.#syncing++;
    try {
      await fsyncAsync(this.#fd);
    } finally {
      // A close asked for meanwhile waited for this fsync (the fd must outlive it).
      if (--this.#syncing === 0 && this.#closed) fs.closeSync(this.#fd);
    }
  }

  /** Cuts the file back to `bytes` (used after a failed append) and fsyncs. */
  truncate(bytes: number): void {
    fs.ftruncateSync(this.#fd, bytes);
    fs.fsyncSync(this.#fd);
  }

  /** Closes the file; further appends throw. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#syncing === 0) fs.closeSync(this.#fd);
  }
}
