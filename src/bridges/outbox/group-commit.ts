/**
 * The outbox's group commit (outbox.ts): the sends and edits queued within one turn of the event
 * loop are written in one transaction, then become entries that wait for their turn. On a store
 * that answers later (Postgres) nothing starts while the commit is in flight.
 */
import { PhasebridgeError } from '../../errors.ts';
import type { OutgoingMessage, Urgency } from '../messages.ts';
import type { OutboxKind } from './limits.ts';
import {
  closes,
  deferred,
  type Entry,
  item,
  moreUrgent,
  raised,
  type Waiter,
} from './outbox-entries.ts';
import type { OutboxOptions } from './outbox-options.ts';
import { resent } from './resend.ts';
import type { Maybe, OutboxBatch, OutboxRow, WriteChain } from './store-port.ts';

/** A call queued in this turn, written with the next group commit. */
export interface Draft {
  lane: string;
  kind: OutboxKind;
  target: string;
  message: OutgoingMessage;
  urgency: Urgency;
  waiters: Waiter[];
  /** The waiting edit whose row this one replaces (coalescing), if any. */
  replaces?: Entry;
  /** Its place in the queue at its urgency (set by `add`, moved by `raise`; PaceItem.order). */
  order?: number;
}

/** What the group commit needs of its Outbox. */
export interface CommitContext {
  readonly options: OutboxOptions;
  readonly entries: Map<number, Entry>;
  /** Store writes, in order. */
  readonly writes: WriteChain;
  stopped(): boolean;
  /** Starts the calls whose turn it is. */
  pump(): void;
  /** Answers the callers of `drained` if nothing waits or runs. */
  drainedIfIdle(): void;
}

/** Collects a turn's calls and writes them in one transaction. */
export class GroupCommit {
  readonly #c: CommitContext;
  /** Calls queued since the last group commit, in queue order. */
  #drafts: Draft[] = [];
  /** Callers of `queue` told when this turn's group commit is written (or failed). */
  #committing: Waiter[] = [];
  #flushing: NodeJS.Immediate | undefined;
  /** A group commit is due in a microtask (an interactive row waits: `flushSoon`). */
  #soon = false;
  /** A group commit in flight (a store that answers later): nothing starts until it is done. */
  #commit: Promise<void> | undefined;
  /** New calls in that commit (counted in `size` until they are entries). */
  #inCommit = 0;
  /** Calls queued so far: the place of the next one (PaceItem.order). */
  #queued = 0;

  /** A group commit for the outbox behind `context`. */
  constructor(context: CommitContext) {
    this.#c = context;
  }

  /** New calls not yet entries: drafts of new rows and the new rows of the commit in flight. */
  get size(): number {
    return this.#drafts.filter((d) => d.replaces === undefined).length + this.#inCommit;
  }

  /** The group commit in flight, if any (a store that answers later). */
  get pending(): Promise<void> | undefined {
    return this.#commit;
  }

  /** The edit of `target` queued this turn, if any. */
  draftedEdit(target: string): Draft | undefined {
    return this.#drafts.find((d) => d.kind === 'edit' && d.target === target);
  }

  /** Tells `waiter` when this turn's group commit is written (or failed). */
  tellWhenWritten(waiter: Waiter): void {
    this.#committing.push(waiter);
  }

  /** Queues `draft` for this turn's group commit. */
  add(draft: Draft): void {
    draft.order = ++this.#queued;
    this.#drafts.push(draft);
    this.#flushing ??= setImmediate(() => this.flush());
    if (draft.urgency === 'interactive') this.flushSoon();
  }

  /**
   * A later edit of the same message merged into `draft` this turn: as urgent as the more urgent
   * of the two, in the later one's place when that raised it.
   */
  raise(draft: Draft, urgency: Urgency): void {
    if (moreUrgent(draft.urgency, urgency) === draft.urgency) return;
    draft.urgency = urgency;
    draft.order = ++this.#queued;
    if (urgency === 'interactive') this.flushSoon();
  }

  /**
   * A person waits for an interactive row: it is committed once this task's other work is done
   * (a microtask), not at the end of the event loop's turn, where other queued work (a job's
   * claim, whose spawn forks synchronously) ran first: ~20 ms of a press → edit. Rows queued
   * later in the turn take the next group commit.
   */
  flushSoon(): void {
    if (this.#soon) return;
    this.#soon = true;
    queueMicrotask(() => {
      this.#soon = false;
      this.flush();
    });
  }

  /**
   * The group commit: writes this turn's rows in one transaction, then lets them start. A
   * replacement whose edit started meanwhile becomes a row of its own (the latest still wins).
   */
  flush(): void {
    if (this.#flushing) clearImmediate(this.#flushing);
    this.#flushing = undefined;
    if (this.#commit !== undefined) return; // flushed again when the commit in flight is done
    const drafts = this.#drafts.splice(0);
    const committing = this.#committing.splice(0);
    if (drafts.length === 0) {
      for (const w of committing) w.resolve(null);
      return;
    }
    for (const d of drafts) {
      const r = d.replaces;
      if (r && (r.started || this.#c.entries.get(r.item.id) !== r)) delete d.replaces;
    }
    const inserts = drafts.filter((d) => d.replaces === undefined);
    const replaces = drafts.filter((d) => d.replaces !== undefined);
    const { platform } = this.#c.options.limits;
    const { store } = this.#c.options;
    let written: Maybe<OutboxBatch>;
    try {
      written = this.#c.writes.run(() =>
        store.writeBatch(
          inserts.map((d) => ({ platform, ...pick(d) })),
          replaces.map((d) => ({
            id: d.replaces!.item.id,
            urgency: moreUrgent(d.replaces!.item.urgency, d.urgency),
            row: { platform, ...pick(d) },
          })),
        ),
      );
    } catch (err) {
      for (const w of [...drafts.flatMap((d) => d.waiters), ...committing]) w.reject(err);
      return;
    }
    if (!(written instanceof Promise)) {
      for (const w of committing) w.resolve(null);
      this.#committed(drafts, inserts, replaces, written);
      return;
    }
    this.#inCommit = inserts.length;
    this.#commit = written.then(
      (w) => {
        for (const c of committing) c.resolve(null);
        this.#committed(drafts, inserts, replaces, w);
      },
      (err: unknown) => {
        for (const w of [...drafts.flatMap((d) => d.waiters), ...committing]) w.reject(err);
      },
    );
    void this.#commit.finally(() => {
      this.#commit = undefined;
      this.#inCommit = 0;
      this.#c.drainedIfIdle();
      if (this.#drafts.length > 0) this.flush();
      else this.#c.pump();
    });
  }

  /** The group commit is written: its rows wait for their turn (or join the row found). */
  #committed(
    drafts: readonly Draft[],
    inserts: readonly Draft[],
    replaces: readonly Draft[],
    written: OutboxBatch,
  ): void {
    if (this.#c.stopped()) {
      for (const d of drafts) for (const w of d.waiters) w.reject(deferred());
      return;
    }
    const add = (id: number, d: Draft): void => {
      this.#c.entries.set(id, {
        item: item(id, d.lane, d.kind, d.urgency, 0, d.message, d.order),
        target: d.target,
        message: d.message,
        waiters: d.waiters,
        started: false,
      });
    };
    inserts.forEach((d, i) => {
      const found = written.found[i];
      if (found === undefined) add(written.ids[i]!, d);
      else this.#join(found, d);
    });
    replaces.forEach((d, i) => {
      const own = written.replaced[i];
      if (own !== null && own !== undefined) {
        add(own, d);
        return;
      }
      const entry = d.replaces!;
      if (this.#c.entries.get(entry.item.id) !== entry) {
        // Failed while the commit was in flight (its chat refused us): so is this edit.
        const gone = new PhasebridgeError(
          'PLATFORM',
          'the chat refused the edit this one replaced',
        );
        for (const w of d.waiters) w.reject(gone);
        return;
      }
      entry.message = d.message;
      entry.item = {
        ...raised(entry.item, d.urgency, d.order ?? 0),
        closes: entry.item.closes || closes(d.message),
      };
      entry.waiters.push(...d.waiters);
    });
    this.#c.pump();
  }

  /**
   * A keyed send found already queued or delivered (a restart replaying it): its callers get the
   * first one's result, nothing is sent again.
   */
  #join(found: OutboxRow, d: Draft): void {
    if (found.state === 'confirmed') {
      for (const w of d.waiters) w.resolve(found.resultRef);
      return;
    }
    const entry = this.#c.entries.get(found.id);
    if (entry) {
      entry.waiters.push(...d.waiters);
      return;
    }
    // Left open by the previous process, not loaded yet (before `start`): loaded now.
    this.#c.entries.set(found.id, {
      item: item(found.id, found.lane, found.kind, found.urgency, found.notBefore, found.message),
      target: found.target,
      message: found.message,
      waiters: d.waiters,
      started: false,
      resent: resent(found),
    });
  }
}

/** The row fields of a draft. */
function pick(d: Draft) {
  return { lane: d.lane, kind: d.kind, target: d.target, message: d.message, urgency: d.urgency };
}
