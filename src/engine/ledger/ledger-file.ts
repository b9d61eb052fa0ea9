/**
 * The ledger file (`ledger.jsonl`): reading with crash-damage detection, and appending with fsync.
 * A line counts only once its newline is on disk: a damaged LAST line is a torn append (dropped,
 * reported, truncated away before the next append); a damaged line before it is corruption.
 */
import fs from 'node:fs';
import { fsyncAsync } from './atomic-write.ts';
import { type LedgerEntry, parseLedgerLine } from './ledger-format.ts';
import { READ_LIMITS, sizeText, UnsafePathError } from './safe-path.ts';

const { O_WRONLY, O_APPEND, O_CREAT, O_NOFOLLOW, O_NONBLOCK, O_RDONLY } = fs.constants;

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
  /**
   * Why the file itself is refused (a FIFO, a symlink, a hard link); `readable` when its entries
   * were still read (a hard link: a repair rewrites them into a file of its own).
   */
  refused?: { reason: string; readable: boolean };
  /** Bytes read from the file by this call (a resumed read reads only what was appended). */
  readBytes?: number;
  /** True when this read went on from a {@link LedgerResume}: `entries` are the new ones only. */
  resumed?: boolean;
  /** Where the next read can go on from; set only when every line read was good. */
  resume?: LedgerResume;
}

/**
 * Where a clean read of a ledger ended, so the next read of the same file goes on from there
 * instead of reading its whole history again. Only valid for the same file (device and inode)
 * at least as long as `offset`: a repair renames a new file in, a truncation shortens it.
 */
export interface LedgerResume {
  dev: number;
  ino: number;
  /** Byte offset after the last good line. */
  offset: number;
  /** Lines read so far. */
  line: number;
  /** The last good line's seq. */
  prevSeq: number;
  /** Idempotency keys seen so far (a duplicate later is corruption). */
  keys: Set<string>;
  /** The last bytes before `offset`: a file rewritten in place no longer has them there. */
  guard: Buffer;
}

/** Bytes before the resume offset compared on a resumed read. */
const GUARD_BYTES = 64;

const NEWLINE = 0x0a;
/** Bytes read per chunk: a ledger is never read whole into one buffer. */
const CHUNK = 256 * 1024;

/**
 * Reads and validates a ledger; a missing file reads as empty. Never modifies the file. A ledger
 * that is not a regular file (a FIFO, a symlink) or has more than one hard link is `refused`: a
 * hard-linked one is still read (its entries are the run's), never appended to.
 */
export function readLedger<E = unknown, F = unknown>(
  file: string,
  lineLimit: number = READ_LIMITS.ledgerLine,
  from?: LedgerResume,
): LedgerRead<E, F> {
  let fd: number;
  try {
    // O_NONBLOCK: a FIFO planted in place of the ledger must not hang the open.
    fd = fs.openSync(file, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { entries: [], goodBytes: 0, ends: [], fileBytes: 0 };
    if (code === 'ELOOP') {
      return refusedRead(`refusing to follow the symlink ${file} planted in the workspace`);
    }
    throw err;
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) return refusedRead(`${file} is not a regular file`);
    const resumed =
      from !== undefined &&
      from.dev === st.dev &&
      from.ino === st.ino &&
      st.size >= from.offset &&
      sameBytes(fd, from.offset - from.guard.length, from.guard);
    const parser = new LedgerParser<E, F>(lineLimit, resumed ? from : undefined);
    const buf = Buffer.alloc(Math.min(CHUNK, Math.max(1, st.size - (resumed ? from.offset : 0))));
    const start = resumed ? from.offset : 0;
    let pos = start;
    while (!parser.done) {
      const n = fs.readSync(fd, buf, 0, buf.length, pos);
      if (n === 0) break;
      parser.push(buf.subarray(0, n));
      pos += n;
    }
    const read = { ...parser.end(Math.max(st.size, pos)), readBytes: pos - start, resumed };
    if (st.nlink > 1) {
      const reason = `${file} has ${st.nlink} hard links (a file elsewhere shares it): it is never written through`;
      return { ...read, refused: { reason, readable: true } };
    }
    if (read.tornTail || read.corrupt) return read;
    const resume = parser.resume(st.dev, st.ino);
    const guard = Buffer.alloc(Math.min(GUARD_BYTES, resume.offset));
    fs.readSync(fd, guard, 0, guard.length, resume.offset - guard.length);
    return { ...read, resume: { ...resume, guard } };
  } finally {
    fs.closeSync(fd);
  }
}

/** True when the file holds `expected` at `at`. */
function sameBytes(fd: number, at: number, expected: Buffer): boolean {
  const got = Buffer.alloc(expected.length);
  return fs.readSync(fd, got, 0, got.length, at) === got.length && got.equals(expected);
}

function refusedRead<E, F>(reason: string): LedgerRead<E, F> {
  return {
    entries: [],
    goodBytes: 0,
    ends: [],
    fileBytes: 0,
    refused: { reason, readable: false },
  };
}

/** Splits and validates ledger bytes (pure; exported for tests and tools). */
export function parseLedger<E = unknown, F = unknown>(
  buf: Buffer,
  lineLimit: number = READ_LIMITS.ledgerLine,
): LedgerRead<E, F> {
  const parser = new LedgerParser<E, F>(lineLimit);
  parser.push(buf);
  return parser.end(buf.length);
}

/**
 * Validates a ledger fed chunk by chunk; stops at the first bad line. A line longer than the
 * limit is corruption (never a torn append: dropping it silently could lose a real command).
 */
class LedgerParser<E, F> {
  readonly #limit: number;
  readonly #entries: LedgerEntry<E, F>[] = [];
  readonly #ends: number[] = [];
  #keys = new Set<string>();
  #parts: Buffer[] = [];
  #partBytes = 0;
  /** Offset of the start of the current (unfinished) line. */
  #start = 0;
  #line = 0;
  #prevSeq = -1;
  #stop: { torn?: TornTail; corrupt?: CorruptLine } | null = null;

  constructor(limit: number, from?: LedgerResume) {
    this.#limit = limit;
    if (from) {
      this.#start = from.offset;
      this.#line = from.line;
      this.#prevSeq = from.prevSeq;
      this.#keys = from.keys;
    }
  }

  /** Where a later read of the same file goes on from (after a clean end), less its guard. */
  resume(dev: number, ino: number): Omit<LedgerResume, 'guard'> {
    return {
      dev,
      ino,
      offset: this.#start,
      line: this.#line,
      prevSeq: this.#prevSeq,
      keys: this.#keys,
    };
  }

  /** True once a bad line was found: later bytes do not matter. */
  get done(): boolean {
    return this.#stop !== null;
  }

  push(chunk: Buffer): void {
    let from = 0;
    while (this.#stop === null && from < chunk.length) {
      const nl = chunk.indexOf(NEWLINE, from);
      const piece = chunk.subarray(from, nl === -1 ? chunk.length : nl);
      if (this.#partBytes + piece.length > this.#limit) {
        this.#line++;
        const reason = `line is over the ${sizeText(this.#limit)} limit for a ledger line`;
        this.#stop = { corrupt: { line: this.#line, reason } };
        return;
      }
      // A line's unfinished start is copied: the caller reads the next chunk into the same buffer.
      this.#parts.push(nl === -1 ? Buffer.from(piece) : piece);
      this.#partBytes += piece.length;
      if (nl === -1) return;
      this.#finishLine(false);
      from = nl + 1;
    }
  }

  #finishLine(unterminated: boolean): { reason: string; crashDamage: boolean } | null {
    this.#line++;
    const text = Buffer.concat(this.#parts).toString('utf8');
    const lineBytes = this.#partBytes + (unterminated ? 0 : 1);
    this.#parts = [];
    this.#partBytes = 0;
    const checked = checkLine<E, F>(text, unterminated, this.#prevSeq, this.#keys);
    if ('reason' in checked) {
      // Set by end() for the last line; a bad line with more after it is corruption.
      this.#stop = { corrupt: { line: this.#line, reason: checked.reason } };
      this.#pendingDamage = { ...checked, bytes: lineBytes };
      return checked;
    }
    this.#entries.push(checked);
    this.#keys.add(checked.key);
    this.#prevSeq = checked.seq;
    this.#start += lineBytes;
    this.#ends.push(this.#start);
    return null;
  }

  #pendingDamage: { reason: string; crashDamage: boolean; bytes: number } | null = null;

  /** The result, `fileBytes` being the file's length. */
  end(fileBytes: number): LedgerRead<E, F> {
    if (this.#stop === null && this.#partBytes > 0) this.#finishLine(true);
    const result = { entries: this.#entries, ends: this.#ends, goodBytes: this.#start, fileBytes };
    const stop = this.#stop;
    if (stop === null) return { ...result, goodBytes: fileBytes };
    const c = stop.corrupt!;
    const damage = this.#pendingDamage;
    // Only damage a crash can cause, and only on the last line, is a torn append.
    const isLast = damage !== null && this.#start + damage.bytes >= fileBytes;
    if (damage?.crashDamage && isLast) {
      return {
        ...result,
        tornTail: { line: c.line, bytes: fileBytes - this.#start, reason: c.reason },
      };
    }
    return { ...result, corrupt: c };
  }
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
    const fd = fs.openSync(file, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK, 0o600);
    try {
      const st = fs.fstatSync(fd);
      // Append-only: a second link would carry every line into a file elsewhere.
      if (!st.isFile())
        throw new UnsafePathError(file, `refusing ${file}: it is not a regular file`);
      if (st.nlink > 1) {
        throw new UnsafePathError(file, `refusing ${file}: it has ${st.nlink} hard links`);
      }
      if (st.size > goodBytes) {
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
      // A turn later, as the files a commit staged before this line (stageFileAtomicFast): their
      // fsyncs go to the thread pool first, this one right after, with no call in between.
      await Promise.resolve();
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
