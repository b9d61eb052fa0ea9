/**
 * Follows a run's ledger as it grows, without locking it: each poll folds only the lines added
 * since the last one, so watching a long run costs what it adds, not its length (`logs --follow`).
 */
import fs from 'node:fs';
import type { Effect, RunEvent } from '../events.ts';
import { evolve } from '../evolve.ts';
import { parseLedgerLine } from '../ledger/ledger-format.ts';
import type { RunState } from '../model.ts';

const NEWLINE = 0x0a;

/** The state of one run's ledger, kept up to date by {@link RunFollower.poll}. */
export class RunFollower {
  readonly #file: string;
  #offset = 0;
  #state: RunState | null = null;

  /** Follows `<runDir>/ledger.jsonl` (given as `ledgerFile`). */
  constructor(ledgerFile: string) {
    this.#file = ledgerFile;
  }

  /**
   * Reads the complete lines added since the last poll and returns the state after them (null
   * while the ledger has none). A line that cannot be read or applied stops the reading there;
   * a ledger cut back (a repair) is read again from its start.
   */
  poll(): RunState | null {
    let fd: number;
    try {
      fd = fs.openSync(this.#file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return this.#state;
      throw err;
    }
    try {
      const size = fs.fstatSync(fd).size;
      if (size < this.#offset) {
        this.#offset = 0;
        this.#state = null;
      }
      if (size === this.#offset) return this.#state;
      const buf = Buffer.alloc(size - this.#offset);
      const read = fs.readSync(fd, buf, 0, buf.length, this.#offset);
      this.#fold(buf.subarray(0, read));
    } finally {
      fs.closeSync(fd);
    }
    return this.#state;
  }

  #fold(buf: Buffer): void {
    let start = 0;
    try {
      for (let nl = buf.indexOf(NEWLINE); nl !== -1; nl = buf.indexOf(NEWLINE, start)) {
        const parsed = parseLedgerLine<RunEvent, Effect>(buf.toString('utf8', start, nl));
        if (!parsed.ok) return;
        let next = this.#state;
        try {
          for (const event of parsed.entry.events) next = evolve(next, event);
        } catch {
          return; // the store reports such a line; a viewer just stops before it
        }
        this.#state = next;
        start = nl + 1;
      }
    } finally {
      this.#offset += start;
    }
  }
}
