/**
 * The outbox of one platform: every send and edit becomes a row (committed first), waits in the
 * pacer's order and is handed to the adapter when the platform's limits allow; the caller's
 * promise settles when the platform answered. A restart delivers the rows it finds open.
 *
 * Edits of one message coalesce while they wait: a new edit replaces the waiting one (its
 * callers are answered when the latest content is delivered), so under pressure fewer calls go
 * out and the last state is never overwritten by an older one.
 *
 * Rows are written in groups: the sends and edits queued within one turn of the event loop (a
 * run's end fans out to every chat at once) are committed in one transaction, i.e. one fsync
 * instead of one per row, before any of them may start. On a store that answers later
 * (Postgres) no call starts while a group commit is in flight, and the writes of the rows keep
 * their order; SQLite's synchronous store is used at once, as it always was.
 */
import { randomBytes } from 'node:crypto';
import {
  ChatUnreachableError,
  PhasebridgeError,
  RateLimitedError,
  StoppingError,
} from '../../errors.ts';
import type { OutgoingMessage, Urgency } from '../channel.ts';
import { laneOf, type OutboxKind } from './limits.ts';
import {
  absorbSuperseded,
  closes,
  type Entry,
  item,
  moreUrgent,
  type Waiter,
} from './outbox-entries.ts';
import {
  type OutboxFailure,
  type OutboxOptions,
  type OutboxTimers,
  REAL_OUTBOX_TIMERS,
} from './outbox-options.ts';
import { type PaceItem, Pacer } from './pacer.ts';
import { clearRepeats, resent, sendOrFind } from './resend.ts';
import {
  type Maybe,
  type OutboxBatch,
  type OutboxRow,
  type RecentCall,
  WriteChain,
} from './store-port.ts';

export { type OutboxFailure, type OutboxOptions, type OutboxTimers, REAL_OUTBOX_TIMERS };

/** A call queued in this turn, written with the next group commit. */
interface Draft {
  lane: string;
  kind: OutboxKind;
  target: string;
  message: OutgoingMessage;
  urgency: Urgency;
  waiters: Waiter[];
  /** The waiting edit whose row this one replaces (coalescing), if any. */
  replaces?: Entry;
}

/** Delivers one platform's queued calls at the pace its limits allow. */
export class Outbox {
  readonly #o: OutboxOptions;
  readonly #timers: OutboxTimers;
  readonly #pacer: Pacer;
  readonly #entries = new Map<number, Entry>();
  readonly #running = new Set<Promise<void>>();
  readonly #drained: (() => void)[] = [];
  /** Calls queued since the last group commit, in queue order. */
  #drafts: Draft[] = [];
  /** Callers of `queue` told when this turn's group commit is written (or failed). */
  #committing: Waiter[] = [];
  #flushing: NodeJS.Immediate | undefined;
  /** Store writes, in order (WriteChain). */
  readonly #writes = new WriteChain();
  /** A group commit in flight (a store that answers later): nothing starts until it is done. */
  #commit: Promise<void> | undefined;
  /** New calls in that commit (counted in `size` until they are entries). */
  #inCommit = 0;
  /** The rows a previous process left are being read (a store that answers later). */
  #loading = false;
  #timer: { handle: unknown; at: number } | undefined;
  #started = false;
  #stopped = false;

  /** Calls queue from the start; nothing is delivered before `start`. */
  constructor(options: OutboxOptions) {
    this.#o = options;
    this.#timers = options.timers ?? REAL_OUTBOX_TIMERS;
    this.#pacer = new Pacer(options.limits);
  }

  /**
   * Loads the rows a previous process left open (delivered with no caller waiting) and starts
   * delivering; a second call does nothing more.
   */
  start(): void {
    if (this.#started || this.#stopped) return;
    this.#started = true;
    // The previous process's last calls still count in the platform's windows.
    const { store, limits } = this.#o;
    const now = this.#timers.now();
    const longest = Math.max(0, ...limits.limits.map((l) => l.windowMs));
    const recent = store.recent(limits.platform, now - longest);
    const open = store.open(limits.platform);
    if (recent instanceof Promise || open instanceof Promise) {
      this.#loading = true;
      void Promise.all([recent, open])
        .then(([r, o]) => this.#load(r, o, now))
        .catch((err: unknown) => this.#o.log?.error({ err }, 'outbox: open rows not read'))
        .finally(() => {
          this.#loading = false;
          this.#pump();
        });
      return;
    }
    this.#load(recent, open, now);
    this.#pump();
  }

  /** Paces after the previous process's last calls and takes over the rows it left open. */
  #load(recent: readonly RecentCall[], open: readonly OutboxRow[], now: number): void {
    for (const r of recent) {
      // An unanswered call may have reached the platform any time until now.
      this.#pacer.recordPast(r.lane, r.kind, r.state === 'attempted' ? now : r.at);
    }
    for (const row of open) {
      if (this.#entries.has(row.id)) continue;
      this.#entries.set(row.id, {
        item: item(row.id, row.lane, row.kind, row.urgency, row.notBefore, row.message),
        target: row.target,
        message: row.message,
        waiters: [],
        started: false,
        resent: resent(row),
      });
    }
  }

  /**
   * Stops starting calls and resolves when the calls in flight ended. Open rows stay for the next
   * process; their callers (and later ones) are answered RESOURCE at once instead of waiting.
   */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#flush(); // rows queued this turn are written for the next process
    if (this.#timer) this.#timers.clearTimeout(this.#timer.handle);
    this.#timer = undefined;
    for (const [id, entry] of this.#entries) {
      if (entry.started) continue;
      this.#entries.delete(id);
      for (const w of entry.waiters) w.reject(deferred());
    }
    await Promise.allSettled([...this.#running]);
    while (this.#commit !== undefined) await this.#commit;
    await this.#writes.settled();
  }

  /** The platform whose calls this outbox delivers. */
  get platform(): string {
    return this.#o.limits.platform;
  }

  /**
   * The adapter saw a 429 that it waited out itself (its API-call observer): the lanes with a
   * call in flight (one of them got it) lose their burst for a while (`BURST_COOLDOWN_MS`).
   */
  rateLimitSeen(): void {
    const now = this.#timers.now();
    for (const lane of this.#pacer.busyLanes) this.#pacer.rateLimited(lane, now);
  }

  /** Calls waiting or in flight. */
  get size(): number {
    const drafts = this.#drafts.filter((d) => d.replaces === undefined).length;
    return this.#entries.size + drafts + this.#inCommit;
  }

  /** Resolves once nothing waits or runs. */
  drained(): Promise<void> {
    if (this.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.#drained.push(resolve));
  }

  /**
   * Queues a send (to a chat ref) or an edit (of a message ref): the row is committed (with the
   * others of this turn) before the call may start; the promise settles with the sent message's
   * ref (null for an edit) once the platform answered, or rejects with the adapter's error (or
   * the storage error when the row could not be written).
   */
  enqueue(kind: OutboxKind, target: string, given: OutgoingMessage): Promise<string | null> {
    const lane = laneOf(target); // a malformed ref is refused before anything is written
    // Written with the row: a resend after a kill carries it, so Discord finds its first copy.
    const message = kind === 'send' && !given.nonce ? { ...given, nonce: newNonce() } : given;
    const urgency = message.urgency ?? (kind === 'send' ? 'notice' : 'status');
    return new Promise((resolve, reject) => {
      const waiter = { resolve, reject };
      if (kind === 'edit') {
        // An edit of this message queued this turn, or waiting: the latest content takes its place.
        const draft = this.#drafts.find((d) => d.kind === 'edit' && d.target === target);
        if (draft) {
          draft.message = message;
          draft.urgency = moreUrgent(draft.urgency, urgency);
          draft.waiters.push(waiter);
          return;
        }
        const waiting = this.#waitingEdit(target);
        if (waiting) {
          // Its own urgency: the waiting row's is merged in at the commit, and only if that row
          // has not started by then (else this edit would jump the queue on an urgency that
          // was already delivered).
          this.#draft({
            lane,
            kind,
            target,
            message,
            urgency,
            waiters: [waiter],
            replaces: waiting,
          });
          return;
        }
      }
      this.#draft({ lane, kind, target, message, urgency, waiters: [waiter] });
    });
  }

  /**
   * As `enqueue`, but resolves once the row is committed (or a keyed send found), not when the
   * platform answers: for a caller that must not wait for the chat's pace. A failed delivery
   * still reaches `onFailure`.
   */
  queue(kind: OutboxKind, target: string, message: OutgoingMessage): Promise<void> {
    this.enqueue(kind, target, message).catch(() => undefined);
    return new Promise((resolve, reject) => {
      this.#committing.push({ resolve: () => resolve(), reject });
    });
  }

  #draft(draft: Draft): void {
    this.#drafts.push(draft);
    this.#flushing ??= setImmediate(() => this.#flush());
  }

  /**
   * The group commit: writes this turn's rows in one transaction, then lets them start. A
   * replacement whose edit started meanwhile becomes a row of its own (the latest still wins).
   */
  #flush(): void {
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
      if (r && (r.started || this.#entries.get(r.item.id) !== r)) delete d.replaces;
    }
    const inserts = drafts.filter((d) => d.replaces === undefined);
    const replaces = drafts.filter((d) => d.replaces !== undefined);
    const { platform } = this.#o.limits;
    const { store } = this.#o;
    let written: Maybe<OutboxBatch>;
    try {
      written = this.#writes.run(() =>
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
      if (this.size === 0) for (const done of this.#drained.splice(0)) done();
      if (this.#drafts.length > 0) this.#flush();
      else this.#pump();
    });
  }

  /** The group commit is written: its rows wait for their turn (or join the row found). */
  #committed(
    drafts: readonly Draft[],
    inserts: readonly Draft[],
    replaces: readonly Draft[],
    written: OutboxBatch,
  ): void {
    if (this.#stopped) {
      for (const d of drafts) for (const w of d.waiters) w.reject(deferred());
      return;
    }
    const add = (id: number, d: Draft): void => {
      this.#entries.set(id, {
        item: item(id, d.lane, d.kind, d.urgency, 0, d.message),
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
      if (this.#entries.get(entry.item.id) !== entry) {
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
        ...entry.item,
        urgency: moreUrgent(entry.item.urgency, d.urgency),
        closes: entry.item.closes || closes(d.message),
      };
      entry.waiters.push(...d.waiters);
    });
    this.#pump();
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
    const entry = this.#entries.get(found.id);
    if (entry) {
      entry.waiters.push(...d.waiters);
      return;
    }
    // Left open by the previous process, not loaded yet (before `start`): loaded now.
    this.#entries.set(found.id, {
      item: item(found.id, found.lane, found.kind, found.urgency, found.notBefore, found.message),
      target: found.target,
      message: found.message,
      waiters: d.waiters,
      started: false,
      resent: resent(found),
    });
  }

  /** The newest waiting edit of `target` (the one older waiting edits are absorbed into). */
  #waitingEdit(target: string): Entry | undefined {
    let found: Entry | undefined;
    for (const e of this.#entries.values()) {
      if (e.started || e.item.kind !== 'edit' || e.target !== target) continue;
      if (!found || e.item.id > found.item.id) found = e;
    }
    return found;
  }

  #pump(): void {
    if (!this.#started || this.#stopped || this.#loading || this.#commit !== undefined) return;
    absorbSuperseded(this.#entries);
    for (;;) {
      const now = this.#timers.now();
      const waiting = this.#waitingItems();
      const decision = this.#pacer.next(waiting, now);
      if ('start' in decision) {
        this.#begin(decision.start);
        continue;
      }
      if ('wakeAt' in decision) this.#wakeAt(decision.wakeAt);
      return;
    }
  }

  /**
   * The pacer's items of the calls not started. An edit the adapter would make through a press's
   * own response is `direct` (outside the limits), unless a call of the same message is in
   * flight: it must not overtake that one.
   */
  #waitingItems(): PaceItem[] {
    const via = this.#o.inner.editsViaInteraction?.bind(this.#o.inner);
    const flying = new Set<string>();
    if (via) for (const e of this.#entries.values()) if (e.started) flying.add(e.target);
    const items: PaceItem[] = [];
    for (const e of this.#entries.values()) {
      if (e.started) continue;
      const direct = via !== undefined && e.item.kind === 'edit' && !flying.has(e.target);
      items.push(direct && via(e.target) ? { ...e.item, direct: true } : e.item);
    }
    return items;
  }

  #wakeAt(at: number): void {
    if (this.#timer && this.#timer.at <= at) return;
    if (this.#timer) this.#timers.clearTimeout(this.#timer.handle);
    const handle = this.#timers.setTimeout(
      () => {
        this.#timer = undefined;
        this.#pump();
      },
      Math.max(0, at - this.#timers.now()),
    );
    this.#timer = { handle, at };
  }

  #begin(paced: PaceItem): void {
    const entry = this.#entries.get(paced.id)!;
    entry.started = true;
    const { store } = this.#o;
    // Committed before the call is made (Postgres: awaited in #deliver): a process killed with
    // the call in flight leaves the row `attempted`, so the next leader knows a copy may exist.
    const attempted = this.#write(() => store.attempted(paced.id));
    const uses = this.#pacer.started(paced);
    // The platform had the call at the latest when its answer came back: counted from then.
    const run = this.#deliver(
      entry,
      () => this.#pacer.finished(paced, uses, this.#timers.now()),
      attempted,
    );
    this.#running.add(run);
    run
      .catch((err: unknown) => this.#o.log?.error({ err }, 'outbox: bridge.db write failed'))
      .finally(() => {
        this.#running.delete(run);
        if (this.size === 0) for (const done of this.#drained.splice(0)) done();
        this.#pump();
      });
  }

  async #deliver(
    entry: Entry,
    answered: () => void,
    attempted: Promise<void> | undefined,
  ): Promise<void> {
    const { store, inner } = this.#o;
    const id = entry.item.id;
    if (attempted && !(await this.#marked(entry, attempted, answered))) return;
    let call: Promise<string | null>;
    if (entry.item.kind === 'send') call = sendOrFind(this.#o, entry);
    else call = inner.edit(entry.target, entry.message).then(() => null);
    // The pacer counts the call from its answer, before our own bookkeeping is written.
    call = call.finally(answered);
    try {
      const ref = await call;
      const confirmed = this.#write(() => store.confirmed(id, ref));
      if (confirmed) await confirmed;
      for (const a of entry.absorbed ?? []) {
        const absorbed = this.#write(() => store.confirmed(a.id, null));
        if (absorbed) await absorbed;
      }
      this.#entries.delete(id);
      for (const w of entry.waiters) w.resolve(ref);
      for (const m of [entry.message, ...(entry.absorbed ?? []).map((a) => a.message)]) {
        if (m.owner) this.#o.onConfirmed?.(m.owner, m === entry.message ? ref : null);
      }
      if (entry.resent && ref !== null) await clearRepeats(this.#o, entry, ref);
    } catch (err) {
      if (err instanceof RateLimitedError && !this.#stopped) {
        // The adapter waited as long as its policy allows; keep the row and try again later,
        // and the lane goes without its burst for a while (the platform wants it slower).
        const notBefore = this.#timers.now() + err.retryAfterMs;
        this.#pacer.rateLimited(entry.item.lane, this.#timers.now());
        const retry = this.#write(() => store.retryAt(id, notBefore));
        if (retry) await retry;
        entry.started = false;
        entry.item = { ...entry.item, notBefore };
        return;
      }
      const error =
        err instanceof PhasebridgeError
          ? err
          : new PhasebridgeError('PLATFORM', err instanceof Error ? err.message : String(err));
      const report = {
        id,
        platform: this.#o.limits.platform,
        kind: entry.item.kind,
        target: entry.target,
        lane: entry.item.lane,
        message: entry.message,
        error,
        waited: entry.waiters.length > 0,
      };
      if (error instanceof ChatUnreachableError && error.movedTo && entry.item.kind === 'send') {
        // Same rows, same order, the chat's new id: nothing queued for it is lost or reordered.
        this.#retarget(entry.item.lane, error.movedTo);
        this.#o.log?.info({ id, to: error.movedTo }, 'outbox: chat moved, sends follow it');
        this.#o.onFailure?.({ ...report, waited: false, moved: true });
        return;
      }
      const failed = this.#write(() => store.failed(id, error.code, error.message));
      if (failed) await failed;
      for (const a of entry.absorbed ?? []) {
        const absorbed = this.#write(() => store.failed(a.id, error.code, error.message));
        if (absorbed) await absorbed;
      }
      this.#entries.delete(id);
      for (const w of entry.waiters) w.reject(err);
      this.#o.log?.warn({ id, target: entry.target, code: error.code }, 'outbox: call failed');
      // The whole chat refuses us: what waits for it would only be refused again, one by one.
      if (error instanceof ChatUnreachableError && error.scope === 'chat' && !error.movedTo) {
        this.#abandon(entry.item.lane, err);
      }
      this.#o.onFailure?.({ ...report, moved: false });
    }
  }

  /**
   * Waits for the `attempted` mark; when it cannot be written the call is not made: the entry
   * waits and is tried again in a second (the row is still `pending` in bridge.db).
   */
  async #marked(entry: Entry, attempted: Promise<void>, answered: () => void): Promise<boolean> {
    try {
      await attempted;
      return true;
    } catch (err) {
      answered();
      this.#o.log?.error({ err, id: entry.item.id }, 'outbox: bridge.db write failed, retrying');
      entry.started = false;
      entry.item = { ...entry.item, notBefore: this.#timers.now() + 1000 };
      this.#wakeAt(entry.item.notBefore);
      return false;
    }
  }

  /**
   * A store write in order; undefined when it is done already (SQLite: no await, exactly the old
   * timing), else the promise of it. A synchronous failure throws here, as it always did.
   */
  #write(op: () => Maybe<void>): Promise<void> | undefined {
    const done = this.#writes.run(op);
    return done instanceof Promise ? done : undefined;
  }

  /** A write nobody waits for: a later failure is logged as a synchronous one would be. */
  #logged(write: Promise<void> | undefined): void {
    write?.catch((err: unknown) => this.#o.log?.error({ err }, 'outbox: bridge.db write failed'));
  }

  /** Waiting sends of `lane` (and the one just refused) go to the chat's new ref `to`. */
  #retarget(lane: string, to: string): void {
    const { store } = this.#o;
    const newLane = laneOf(to);
    for (const e of this.#entries.values()) {
      // One call at a time per lane: the only started one is the send just refused.
      if (e.item.lane !== lane || e.item.kind !== 'send') continue;
      const target = to + e.target.slice(lane.length);
      this.#logged(this.#write(() => store.retarget(e.item.id, target, newLane)));
      e.target = target;
      e.started = false;
      e.item = { ...e.item, lane: newLane };
    }
  }

  /** Fails the calls still waiting for `lane`, answering their callers with `err`. */
  #abandon(lane: string, err: unknown): void {
    const { store } = this.#o;
    for (const [id, e] of this.#entries) {
      if (e.started || e.item.lane !== lane) continue;
      const code = err instanceof PhasebridgeError ? err.code : 'PLATFORM';
      const text = err instanceof Error ? err.message : String(err);
      for (const row of [id, ...(e.absorbed ?? []).map((a) => a.id)])
        this.#logged(this.#write(() => store.failed(row, code, text)));
      this.#entries.delete(id);
      for (const w of e.waiters) w.reject(err);
    }
  }
}

/** The answer to a caller whose call stays queued for the next process. */
function deferred(): StoppingError {
  return new StoppingError();
}

/** The row fields of a draft. */
function pick(d: Draft) {
  return { lane: d.lane, kind: d.kind, target: d.target, message: d.message, urgency: d.urgency };
}

/** 16 random characters (Discord takes nonces up to 25). */
function newNonce(): string {
  return randomBytes(12).toString('base64url');
}
