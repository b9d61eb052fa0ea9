/**
 * Reads runs' ledgers without locking them, for the change feed. Each run's ledger is read on
 * from where the last clean read ended (its device, inode and offset), so a commit by another
 * process costs the bytes it appended, not the run's whole history.
 */
import path from 'node:path';
import type { Effect, RunEvent } from '../../engine/events.ts';
import { NATIVE_FILES } from '../../engine/layouts/native.ts';
import { type LedgerResume, readLedger } from '../../engine/ledger/ledger-file.ts';
import type { RunState } from '../../engine/model.ts';
import { analyzeRun, type RunLedgerEntry, replayEntries } from '../../engine/store/run-analysis.ts';
import type { RunStore } from '../../engine/store/run-store.ts';
import { NotFoundError } from '../../errors.ts';
import type { LedgerRead } from './run-feed.ts';

/** Entries kept per run for the feed's gaps; an older gap reads the ledger whole. */
const RECENT_ENTRIES = 64;
/** Runs whose read position is kept (the least recently read are forgotten first). */
const MAX_RUNS = 256;

interface Tail {
  file: string;
  resume: LedgerResume;
  state: RunState;
  recent: RunLedgerEntry[];
}

/** Ledger reads for the feed, each resumed from the previous clean read of the same file. */
export class LedgerTails {
  readonly #tails = new Map<string, Tail>();

  /**
   * The run's replayed state and its good entries, complete for every entry with a seq above
   * `since` (all entries when `since` is undefined). A torn tail is left out.
   */
  read(store: RunStore, runId: string, since?: number): LedgerRead {
    const runDir = store.runDir(runId);
    const file = path.join(runDir, NATIVE_FILES.ledger);
    const tail = this.#tails.get(runId);
    if (tail !== undefined && tail.file === file && since !== undefined) {
      const resumed = this.#resume(tail, since);
      if (resumed) {
        // Most recently read last, so the oldest is forgotten first.
        this.#tails.delete(runId);
        this.#tails.set(runId, tail);
        return resumed;
      }
    }
    this.#tails.delete(runId);
    const a = analyzeRun(runId, runDir, file);
    if (a.state === null) throw new NotFoundError(`run ${runId} not found`);
    if (a.resume !== undefined && a.corrupt === null) {
      const recent = a.entries.slice(-RECENT_ENTRIES);
      this.#tails.set(runId, { file, resume: a.resume, state: a.state, recent });
      if (this.#tails.size > MAX_RUNS) this.#tails.delete(this.#tails.keys().next().value!);
    }
    return { state: a.state, entries: a.entries };
  }

  #resume(tail: Tail, since: number): LedgerRead | null {
    const oldest = tail.recent[0];
    // The gap starts before what is kept: only a whole read has those entries.
    if (oldest !== undefined && since < oldest.seq - oldest.events.length) return null;
    if (oldest === undefined && since < tail.state.seq) return null;
    const read = readLedger<RunEvent, Effect>(tail.file, undefined, tail.resume);
    if (!read.resumed || read.resume === undefined || read.refused) return null;
    if (read.entries.length === 0) return { state: tail.state, entries: tail.recent };
    const replay = replayEntries(read.entries, -1, undefined, undefined, tail.state);
    if (replay.failure !== undefined || replay.state === null) return null;
    tail.state = replay.state;
    tail.resume = read.resume;
    tail.recent = [...tail.recent, ...read.entries].slice(-RECENT_ENTRIES);
    return { state: tail.state, entries: tail.recent };
  }
}
