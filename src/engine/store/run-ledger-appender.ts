/**
 * The append side of one open run's ledger: its writer, its length of good bytes, the run folder
 * held open for fsyncs, and the folders whose new entries must be durable with the next line (a
 * new ledger's folder entry counts only once fsynced with its first line).
 */
import fs from 'node:fs';
import { fsyncAsync, fsyncDirAsync } from '../ledger/atomic-write.ts';
import { LedgerWriter } from '../ledger/ledger-file.ts';

/** Appends lines to a run's ledger, each durable before its append resolves. */
export class RunLedgerAppender {
  readonly #runDir: string;
  readonly #ledger: string;
  #writer: LedgerWriter | null = null;
  #bytes = 0;
  /** The run folder, open for the fsync after each run.json rename (null: opened per write). */
  #dirFd: number | null = null;
  /** Folders with a new entry (the run's, its ledger's) fsynced with the next line. */
  readonly #unsyncedDirs: string[] = [];
  /** Set when a failed append could not be cut back: the ledger ends in a torn line. */
  torn = false;

  constructor(runDir: string, ledger: string, unsyncedDirs: readonly string[] = []) {
    this.#runDir = runDir;
    this.#ledger = ledger;
    this.#unsyncedDirs.push(...unsyncedDirs);
  }

  /** The run folder's descriptor while open (run.json's publish fsyncs it), else null. */
  get dirFd(): number | null {
    return this.#dirFd;
  }

  /** Opens the ledger for appends after its `goodBytes` (a torn tail beyond is cut). */
  open(goodBytes: number): void {
    this.#writer?.close();
    this.#writer = LedgerWriter.open(this.#ledger, goodBytes);
    this.#bytes = goodBytes;
    if (goodBytes === 0 && !this.#unsyncedDirs.includes(this.#runDir)) {
      this.#unsyncedDirs.push(this.#runDir);
    }
    this.#dirFd ??= openDir(this.#runDir);
  }

  /** Forgets the writer (a corrupt ledger is never written to until repaired). */
  detach(): void {
    this.#writer?.close();
    this.#writer = null;
  }

  /**
   * Appends a line (resolving once it and the new folder entries are fsynced); on failure cuts
   * the file back so no half line stays before the next one (`torn` when even that fails).
   */
  async append(line: string): Promise<void> {
    const writer = this.#writer;
    if (writer === null) throw new Error(`the ledger ${this.#ledger} is not open for appends`);
    const dirs = [...this.#unsyncedDirs];
    try {
      const synced = await Promise.allSettled([
        writer.append(line),
        // The run's folder is open already: no open and close on the thread pool.
        ...dirs.map((d) =>
          d === this.#runDir && this.#dirFd !== null ? fsyncAsync(this.#dirFd) : fsyncDirAsync(d),
        ),
      ]);
      const failed = synced.find((r) => r.status === 'rejected');
      if (failed) throw (failed as PromiseRejectedResult).reason;
      this.#unsyncedDirs.splice(0, dirs.length);
    } catch (err) {
      try {
        writer.truncate(this.#bytes);
      } catch {
        // Cannot repair now: a reopen will find and drop the torn tail.
        this.torn = true;
      }
      throw err;
    }
    this.#bytes += Buffer.byteLength(line);
  }

  /** Closes the writer and the run folder's descriptor. */
  close(): void {
    this.detach();
    if (this.#dirFd !== null) fs.closeSync(this.#dirFd);
    this.#dirFd = null;
  }
}

/** The run folder opened for fsync (not following a symlink). */
function openDir(dir: string): number {
  const { O_RDONLY, O_DIRECTORY, O_NOFOLLOW } = fs.constants;
  return fs.openSync(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
}
