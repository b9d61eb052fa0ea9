/**
 * The change feed of a running bridge: every commit to a run, from this process or any other
 * (a CLI driving a run, a hand edit, a second tool), reaches the update listeners exactly as
 * this process's own commits do, in ledger order, each event once.
 *
 * Sources: this process's commits (`own`), `run_changes` rows written by other processes
 * (polled: the store's data version first, so an idle poll costs one pragma on SQLite, one index
 * lookup on Postgres), and pokes.
 * Per run the feed keeps a cursor, the ledger seq whose events were delivered; a gap between the
 * cursor and an update is filled from the ledger. The cursor is persisted after delivery
 * (`run_feed`), so at start-up the feed replays what it missed while it was down.
 */
import type { RunFeedStore } from '../../db/repositories/run-feed.ts';
import type { RunEvent } from '../../engine/events.ts';
import { isTerminal, type RunState } from '../../engine/model.ts';
import type { RunLedgerEntry } from '../../engine/store/run-analysis.ts';
import { StoppingError } from '../../errors.ts';
import type { Log } from '../../log.ts';
import { errorMessage } from '../queue/outcome.ts';
import type { RunUpdate } from './types.ts';

/** A run as its ledger says: the state and the entries. */
export interface LedgerRead {
  state: RunState;
  entries: readonly RunLedgerEntry[];
}

/** What the feed needs. */
export interface RunFeedDeps {
  repo: RunFeedStore;
  /**
   * Reads a run's ledger without locking it; the entries must be complete above seq `since`
   * (all of them when it is undefined).
   */
  read(runId: string, since?: number): Promise<LedgerRead>;
  /** Hands an update to the listeners; resolves once they have acted on it. */
  deliver(update: RunUpdate): Promise<void>;
  log: Log;
  /** Poll interval for other processes' commits (default 50 ms). */
  pollMs?: number;
}

/** Delivers every run's commits once, in order, whoever made them. */
export class RunFeed {
  readonly #deps: RunFeedDeps;
  readonly #cursors = new Map<string, number>();
  readonly #chains = new Map<string, Promise<void>>();
  readonly #dirty = new Map<string, number>();
  readonly #ended = new Set<string>();
  /** Deliveries wait for start(): listeners subscribe after the orchestrator is created. */
  readonly #gate: Promise<void>;
  #open: () => void = () => {};
  #lastChangeId = 0;
  #dataVersion = -1;
  #timer: NodeJS.Timeout | undefined;
  #flushTimer: NodeJS.Immediate | undefined;
  #polls = 0;
  #polling = false;
  /** Cursor writes in flight (Postgres answers later; SQLite's are done when started). */
  #flushing: Promise<void> = Promise.resolve();
  #closed = false;

  constructor(deps: RunFeedDeps) {
    this.#deps = deps;
    this.#gate = new Promise((resolve) => {
      this.#open = resolve;
    });
  }

  /** Replays what was missed while no bridge ran, then polls for other processes' commits. */
  async start(): Promise<void> {
    const { repo } = this.#deps;
    this.#lastChangeId = await repo.latestId();
    this.#dataVersion = await repo.dataVersion();
    this.#open();
    for (const p of await repo.pending()) {
      // Stopping: what is not replayed yet waits for the next start (the cursors say where).
      if (this.#closed) break;
      if (p.cursor !== null) this.#cursors.set(p.runId, p.cursor);
      await this.poke(p.runId, p.firstSeq);
    }
    this.#timer = setInterval(() => void this.#poll(), this.#deps.pollMs ?? 50);
    this.#timer.unref();
  }

  /** A commit of this process: delivered now, after anything of the run not delivered yet. */
  own(update: RunUpdate): Promise<void> {
    return this.#inOrder(update.runId, async () => {
      const seq = update.state.seq;
      const from = seq - update.events.length;
      const base = (await this.#cursorOf(update.runId)) ?? from;
      // Already delivered from the ledger, or the ledger was cut back by a repair: look.
      if (seq <= base) return this.#fromLedger(update.runId, base);
      if (from > base) return this.#fromLedger(update.runId, base);
      await this.#send({ ...update, events: update.events.slice(base - from) });
    });
  }

  /**
   * The run may have commits not delivered yet: they are read from its ledger. A run the feed
   * never saw starts at the entry of `firstSeq` (its first known change), else nothing is replayed.
   */
  poke(runId: string, firstSeq?: number): Promise<void> {
    return this.#inOrder(runId, async () => {
      const base = await this.#cursorOf(runId);
      if (base !== undefined) return this.#fromLedger(runId, base);
      const read = await this.#deps.read(runId, firstSeq === undefined ? undefined : firstSeq - 1);
      const first = read.entries.find((e) => firstSeq !== undefined && e.seq >= firstSeq);
      const start = first ? first.seq - first.events.length : read.state.seq;
      await this.#sendFrom(read, start);
    });
  }

  /** Stops polling and waits for deliveries in hand; cursors are written. */
  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#timer);
    this.#open();
    await Promise.all(this.#chains.values());
    this.#flush();
    await this.#flushing;
  }

  async #cursorOf(runId: string): Promise<number | undefined> {
    const known = this.#cursors.get(runId);
    if (known !== undefined) return known;
    const stored = await this.#deps.repo.cursor(runId);
    if (stored !== null) this.#cursors.set(runId, stored);
    return stored ?? undefined;
  }

  async #fromLedger(runId: string, base: number): Promise<void> {
    await this.#sendFrom(await this.#deps.read(runId, base), base);
  }

  async #sendFrom(read: LedgerRead, base: number): Promise<void> {
    if (read.state.seq < base) {
      // A repair cut the ledger back: start again from what it kept, showing the state as is.
      await this.#deps.repo.resetCursor(read.state.id, read.state.seq);
      this.#cursors.delete(read.state.id);
      await this.#send({ runId: read.state.id, state: read.state, events: [] });
      return;
    }
    const events: RunEvent[] = [];
    for (const entry of read.entries) {
      const from = entry.seq - entry.events.length;
      if (entry.seq <= base) continue;
      events.push(...entry.events.slice(Math.max(0, base - from)));
    }
    if (read.state.seq <= base) return;
    await this.#send({ runId: read.state.id, state: read.state, events });
  }

  async #send(update: RunUpdate): Promise<void> {
    await this.#deps.deliver(update);
    this.#cursors.set(update.runId, update.state.seq);
    this.#dirty.set(update.runId, update.state.seq);
    if (isTerminal(update.state.status)) this.#ended.add(update.runId);
    this.#flushTimer ??= setImmediate(() => this.#flush());
  }

  /** Persists the cursors moved since the last flush (batched off the hot path). */
  #flush(): void {
    if (this.#flushTimer !== undefined) clearImmediate(this.#flushTimer);
    this.#flushTimer = undefined;
    const writes: Promise<void>[] = [];
    const failed = (runId: string, err: unknown) =>
      this.#deps.log.warn({ runId, err: errorMessage(err) }, 'feed cursor not saved');
    for (const [runId, seq] of this.#dirty) {
      try {
        const written = this.#deps.repo.setCursor(runId, seq);
        if (written instanceof Promise) writes.push(written.catch((err) => failed(runId, err)));
      } catch (err) {
        failed(runId, err);
      }
    }
    // A cursor only moves forward in the store, so later flushes may overtake these safely.
    if (writes.length > 0) this.#flushing = Promise.all([this.#flushing, ...writes]).then(() => {});
    this.#dirty.clear();
    // Finished runs leave memory once their cursor is on disk: memory grows with active runs.
    for (const runId of this.#ended) this.#cursors.delete(runId);
    this.#ended.clear();
  }

  async #poll(): Promise<void> {
    // One poll at a time: a Postgres answer slower than the interval is not asked again meanwhile.
    if (this.#closed || this.#polling) return;
    this.#polling = true;
    const { repo, log } = this.#deps;
    try {
      if (++this.#polls % 1200 === 0) await repo.prune();
      const version = await repo.dataVersion();
      if (version === this.#dataVersion) return;
      this.#dataVersion = version;
      let rows = await repo.changesAfter(this.#lastChangeId);
      while (rows.length > 0) {
        const firstSeq = new Map<string, number>();
        for (const row of rows) {
          if (!firstSeq.has(row.runId)) firstSeq.set(row.runId, row.seq);
          this.#lastChangeId = row.id;
        }
        for (const [runId, seq] of firstSeq) void this.poke(runId, seq);
        rows = await repo.changesAfter(this.#lastChangeId);
      }
    } catch (err) {
      log.warn({ err: errorMessage(err) }, 'change feed: poll failed; retrying');
    } finally {
      this.#polling = false;
    }
  }

  /** Runs `task` after the run's earlier feed work; a failure is logged and the chain goes on. */
  #inOrder(runId: string, task: () => Promise<void>): Promise<void> {
    const previous = this.#chains.get(runId) ?? Promise.resolve();
    const next = previous
      .then(() => this.#gate)
      .then(task)
      .catch((err: unknown) => {
        // Cut short by the bridge's stop: the cursor stays, the next start delivers it again.
        if (err instanceof StoppingError) {
          this.#deps.log.debug({ runId }, 'change feed: update left for the next start');
          return;
        }
        this.#deps.log.warn({ runId, err: errorMessage(err) }, 'change feed: update not delivered');
      })
      .finally(() => {
        if (this.#chains.get(runId) === next) this.#chains.delete(runId);
      });
    this.#chains.set(runId, next);
    return next;
  }
}
