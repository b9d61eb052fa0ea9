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
 *
 * The group commit is group-commit.ts; a call handed to the adapter and its answer,
 * outbox-delivery.ts.
 */
import { randomBytes } from 'node:crypto';
import type { OutgoingMessage } from '../messages.ts';
import { type CommitContext, GroupCommit } from './group-commit.ts';
import { laneOf, type OutboxKind } from './limits.ts';
import { type DeliveryContext, deliver } from './outbox-delivery.ts';
import { absorbSuperseded, deferred, type Entry, item } from './outbox-entries.ts';
import {
  type OutboxFailure,
  type OutboxOptions,
  type OutboxTimers,
  REAL_OUTBOX_TIMERS,
} from './outbox-options.ts';
import { type PaceItem, Pacer } from './pacer.ts';
import { resent } from './resend.ts';
import { type Maybe, type OutboxRow, type RecentCall, WriteChain } from './store-port.ts';

export { type OutboxFailure, type OutboxOptions, type OutboxTimers, REAL_OUTBOX_TIMERS };

/** Delivers one platform's queued calls at the pace its limits allow. */
export class Outbox {
  readonly #o: OutboxOptions;
  readonly #timers: OutboxTimers;
  readonly #pacer: Pacer;
  readonly #entries = new Map<number, Entry>();
  readonly #running = new Set<Promise<void>>();
  readonly #drained: (() => void)[] = [];
  /** Store writes, in order (WriteChain). */
  readonly #writes = new WriteChain();
  /** What the group commit and a call's delivery use of this outbox. */
  readonly #context: CommitContext & DeliveryContext;
  readonly #commits: GroupCommit;
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
    this.#context = {
      options,
      timers: this.#timers,
      pacer: this.#pacer,
      entries: this.#entries,
      writes: this.#writes,
      stopped: () => this.#stopped,
      write: (op) => this.#write(op),
      wakeAt: (at) => this.#wakeAt(at),
      pump: () => this.#pump(),
      drainedIfIdle: () => this.#drainedIfIdle(),
    };
    this.#commits = new GroupCommit(this.#context);
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
    this.#commits.flush(); // rows queued this turn are written for the next process
    if (this.#timer) this.#timers.clearTimeout(this.#timer.handle);
    this.#timer = undefined;
    for (const [id, entry] of this.#entries) {
      if (entry.started) continue;
      this.#entries.delete(id);
      for (const w of entry.waiters) w.reject(deferred());
    }
    await Promise.allSettled([...this.#running]);
    while (this.#commits.pending !== undefined) await this.#commits.pending;
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
    return this.#entries.size + this.#commits.size;
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
        const draft = this.#commits.draftedEdit(target);
        if (draft) {
          draft.message = message;
          draft.waiters.push(waiter);
          this.#commits.raise(draft, urgency);
          return;
        }
        const waiting = this.#waitingEdit(target);
        if (waiting) {
          // Its own urgency: the waiting row's is merged in at the commit, and only if that row
          // has not started by then (else this edit would jump the queue on an urgency that
          // was already delivered).
          this.#commits.add({
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
      this.#commits.add({ lane, kind, target, message, urgency, waiters: [waiter] });
    });
  }

  /**
   * As `enqueue`, but resolves once the row is committed (or a keyed send found), not when the
   * platform answers: for a caller that must not wait for the chat's pace. A failed delivery
   * still reaches `onFailure`.
   */
  queue(kind: OutboxKind, target: string, message: OutgoingMessage): Promise<void> {
    return this.commit(kind, target, message).then(() => undefined);
  }

  /**
   * As `queue`, and the call's outcome too: resolves once the row is committed, with `delivered`:
   * what `enqueue` settles with (already handled: an unobserved failure is not an error here).
   */
  async commit(
    kind: OutboxKind,
    target: string,
    message: OutgoingMessage,
  ): Promise<{ delivered: Promise<string | null> }> {
    const delivered = this.enqueue(kind, target, message);
    delivered.catch(() => undefined);
    await new Promise<void>((resolve, reject) => {
      this.#commits.tellWhenWritten({ resolve: () => resolve(), reject });
    });
    // Wrapped: an async function returning the promise itself would wait for the delivery.
    return { delivered };
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
    if (!this.#started || this.#stopped || this.#loading || this.#commits.pending !== undefined)
      return;
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
    // Committed before the call is made (Postgres: awaited in `deliver`): a process killed with
    // the call in flight leaves the row `attempted`, so the next leader knows a copy may exist.
    const attempted = this.#write(() => store.attempted(paced.id));
    const uses = this.#pacer.started(paced, this.#timers.now());
    // The platform had the call at the latest when its answer came back: counted from then.
    const run = deliver(
      this.#context,
      entry,
      () => this.#pacer.finished(paced, uses, this.#timers.now()),
      attempted,
    );
    this.#running.add(run);
    run
      .catch((err: unknown) => this.#o.log?.error({ err }, 'outbox: bridge.db write failed'))
      .finally(() => {
        this.#running.delete(run);
        this.#drainedIfIdle();
        this.#pump();
      });
  }

  /**
   * A store write in order; undefined when it is done already (SQLite: no await, exactly the old
   * timing), else the promise of it. A synchronous failure throws here, as it always did.
   */
  #write(op: () => Maybe<void>): Promise<void> | undefined {
    const done = this.#writes.run(op);
    return done instanceof Promise ? done : undefined;
  }

  /** Answers the callers of `drained` if nothing waits or runs. */
  #drainedIfIdle(): void {
    if (this.size === 0) for (const done of this.#drained.splice(0)) done();
  }
}

/** 16 random characters (Discord takes nonces up to 25). */
function newNonce(): string {
  return randomBytes(12).toString('base64url');
}
