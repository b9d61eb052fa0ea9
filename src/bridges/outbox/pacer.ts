/**
 * The outbox scheduler's decisions, free of I/O and timers: given the calls waiting and the calls
 * made, which call may start now, or when the next one may. The clock is always passed in, so
 * tests drive it with a simulated one.
 *
 * Rules: one call at a time per lane (chat), so a chat's messages arrive in order; new messages
 * of a lane leave in the order they were queued, edits may pass them (an edit changes a message
 * already there); among the calls allowed now the most urgent goes first; among calls as urgent,
 * the chat served least recently, then the call that became that urgent first (`order`), then
 * the oldest row. A call counts in its limits' windows from its start until `windowMs` after it
 * finished (a call reaches the platform at the latest when its answer comes back), so the
 * platform never sees more than a limit's `max` in any window.
 *
 * Where a limit has a `burst`, an interactive call (a person waits for it) needs only a token of
 * the scope's bucket (`max + burst`, refilled at `max` per window), not the window's spacing; a
 * 429 in a lane (`rateLimited`) takes its burst away for `BURST_COOLDOWN_MS`.
 *
 * Where a limit has a `spread`, for `whileMs` after an interactive call was answered the other
 * calls start at most `atOnce` at once, then one every `windowMs / max`: a full window then frees
 * a slot every so often, and a person's next call (exempt, and first) waits about that long.
 *
 * Where a limit has a `statusBurst`, status (progress) edits also take a token of their own bucket
 * (`statusBurst`, refilled at `max - reserve` per window): spread over the window, not spent at
 * its start.
 *
 * A `direct` call (an edit answering a press through the press's own response, outside the
 * platform's limits) counts in no limit and may start while its lane has a call in flight.
 *
 * A call that `closes` a checkpoint's message (the edit, or re-post, that replaces its buttons by
 * the decision) is paced as an interactive one and goes before every other call its limits
 * allow, and a closing send may pass the lane's earlier sends: live buttons on a decided
 * checkpoint must not wait behind a backlog.
 */
import {
  type BucketUse,
  bucketsFor,
  type OutboxKind,
  type PlatformLimits,
  URGENCY_RANK,
  type Urgency,
} from './limits.ts';

/** One queued call as the pacer sees it. */
export interface PaceItem {
  /** Queue order (the outbox row id): lower was queued first. */
  readonly id: number;
  /** The chat it goes to (`laneOf` its chat or message ref). */
  readonly lane: string;
  readonly kind: OutboxKind;
  readonly urgency: Urgency;
  /**
   * Its place among calls of its urgency: the queue position (in this process) of the call that
   * made it as urgent as it is; ties, and rows found at start (absent), go by id. A waiting
   * progress edit taken over by a run's final state takes the final state's place, not its own
   * row's older one, which would let it pass the other chats' earlier final states.
   */
  readonly order?: number;
  /** Not before this time (ms): a retry's back-off. */
  readonly notBefore: number;
  /** It shows a closed checkpoint's decision: first in its lane, even before earlier sends. */
  readonly closes?: boolean;
  /**
   * It answers a press through the press's own response (outside the platform's limits): it
   * counts in no limit and may start beside its lane's call in flight (of another message).
   */
  readonly direct?: boolean;
}

/** What `next` decided. */
export type PaceDecision =
  | { readonly start: PaceItem }
  | { readonly wakeAt: number }
  | { readonly idle: true };

/** How long a lane that got a 429 goes without its burst (its interactive calls paced as others). */
export const BURST_COOLDOWN_MS = 60_000;

/** Tolerance of the token arithmetic (ms-based floats). */
const EPSILON = 1e-9;

/** A bucket no call has used yet. */
const UNUSED: TokenCalls = { finished: [], running: 0 };

/** The calls a token bucket counts: finish times, oldest first, and the calls in flight. */
interface TokenCalls {
  readonly finished: readonly number[];
  readonly running: number;
}

interface Bucket {
  /** Finish times of calls still inside the longest window, oldest first. */
  finished: number[];
  running: number;
  /**
   * A `spread` limit's grid: when its next call is due, one every `windowMs / max` (fractional
   * ms; a call may start from the whole ms at or before, so whole-ms clocks keep the full rate).
   */
  due: number;
  /** Finish times and running count of its status edits alone (a `statusBurst` limit). */
  status?: { finished: number[]; running: number };
}

/** Tracks the calls made per bucket and picks the next call to start. */
export class Pacer {
  readonly #table: PlatformLimits;
  readonly #buckets = new Map<string, Bucket>();
  /** Calls in flight per lane (more than one only beside a direct call). */
  readonly #busyLanes = new Map<string, number>();
  /**
   * When each lane's last call was answered (within the longest window): among calls as urgent,
   * the chat served least recently goes first.
   */
  readonly #served = new Map<string, number>();
  /** Lanes without their burst until then (a 429 came back from them). */
  readonly #noBurstUntil = new Map<string, number>();
  readonly #longestWindow: number;
  /** When the last interactive call was answered (a `spread` limit spreads for a while after). */
  #lastInteractive = Number.NEGATIVE_INFINITY;

  /** Applies one platform's limits table. */
  constructor(table: PlatformLimits) {
    this.#table = table;
    // A bucket is full again after (max + burst) / max windows: older calls no longer matter.
    this.#longestWindow = Math.max(
      0,
      ...table.limits.map((l) => (l.windowMs * (l.max + (l.burst ?? 0))) / l.max),
    );
  }

  /**
   * The platform answered a call of `lane` with a rate limit at `now` (however long it asked to
   * wait): the lane's interactive calls lose their burst for a while, so they are paced as the
   * others until the platform has had a quiet minute.
   */
  rateLimited(lane: string, now: number): void {
    this.#noBurstUntil.set(lane, now + BURST_COOLDOWN_MS);
  }

  /** Whether `lane`'s interactive calls may use a burst at `now`. */
  bursting(lane: string, now: number): boolean {
    const until = this.#noBurstUntil.get(lane);
    if (until === undefined) return true;
    if (until > now) return false;
    this.#noBurstUntil.delete(lane);
    return true;
  }

  /** Lanes with a call in flight. */
  get busyLanes(): ReadonlySet<string> {
    return new Set(this.#busyLanes.keys());
  }

  /** The call to start now, else the time to look again, else idle (nothing can start until a call finishes). */
  next(items: readonly PaceItem[], now: number): PaceDecision {
    const firstSend = new Map<string, number>();
    for (const item of items) {
      if (item.kind !== 'send' || item.closes) continue;
      const seen = firstSend.get(item.lane);
      if (seen === undefined || item.id < seen) firstSend.set(item.lane, item.id);
    }
    let best: PaceItem | undefined;
    let wakeAt = Number.POSITIVE_INFINITY;
    for (const item of items) {
      if (this.#busyLanes.has(item.lane) && !item.direct) continue;
      if (item.kind === 'send' && !item.closes && firstSend.get(item.lane) !== item.id) continue;
      const at = this.earliest(item, now);
      if (at > now) {
        wakeAt = Math.min(wakeAt, at);
        continue;
      }
      if (!best || this.#before(item, best)) best = item;
    }
    if (best) return { start: best };
    return Number.isFinite(wakeAt) ? { wakeAt } : { idle: true };
  }

  /** The earliest time `item` may start, by its limits and back-off (Infinity: after a running call ends). */
  earliest(item: PaceItem, now: number): number {
    let at = Math.max(now, item.notBefore);
    if (item.direct) return at;
    // A closing call is paced as an interactive one: a person looks at those buttons.
    const urgency = item.closes ? 'interactive' : item.urgency;
    const burst = urgency === 'interactive' && this.bursting(item.lane, now);
    for (const use of bucketsFor(this.#table, item.lane, item.kind)) {
      at = Math.max(at, this.#free(use, urgency, burst, now));
    }
    return at;
  }

  /** A call starts at `now`: it counts in its buckets and holds its lane until `finished`. */
  started(item: PaceItem, now: number): BucketUse[] {
    const uses = item.direct ? [] : bucketsFor(this.#table, item.lane, item.kind);
    for (const use of uses) {
      const b = this.#bucket(use.key);
      b.running++;
      const { spread, windowMs, max } = use.limit;
      if (spread) {
        // The grid allows `atOnce` calls at once after a pause, then one every windowMs / max.
        const slot = windowMs / max;
        b.due = Math.max(b.due, now - (spread.atOnce - 1) * slot) + slot;
      }
      if (isStatus(item) && use.limit.statusBurst) {
        b.status ??= { finished: [], running: 0 };
        b.status.running++;
      }
    }
    this.#busyLanes.set(item.lane, (this.#busyLanes.get(item.lane) ?? 0) + 1);
    return uses;
  }

  /** A call ended (either way) at `now`; it keeps counting for each window from now. */
  finished(item: PaceItem, uses: readonly BucketUse[], now: number): void {
    for (const use of uses) {
      const b = this.#bucket(use.key);
      b.running--;
      b.finished.push(now);
      if (isStatus(item) && b.status) {
        b.status.running--;
        b.status.finished.push(now);
        while (b.status.finished.length > 0 && b.status.finished[0]! <= now - this.#longestWindow)
          b.status.finished.shift();
      }
      // Older than the longest window: no longer counts anywhere.
      while (b.finished.length > 0 && b.finished[0]! <= now - this.#longestWindow) {
        b.finished.shift();
      }
    }
    this.#served.set(item.lane, now);
    if (item.urgency === 'interactive' || item.closes) this.#lastInteractive = now;
    for (const [lane, at] of this.#served)
      if (at <= now - this.#longestWindow) this.#served.delete(lane);
    const left = (this.#busyLanes.get(item.lane) ?? 1) - 1;
    if (left > 0) this.#busyLanes.set(item.lane, left);
    else this.#busyLanes.delete(item.lane);
  }

  /** A call made before this pacer existed (by the previous process), counted from `at`. */
  recordPast(lane: string, kind: OutboxKind, at: number): void {
    for (const use of bucketsFor(this.#table, lane, kind)) {
      const b = this.#bucket(use.key);
      b.finished.push(at);
      b.finished.sort((x, y) => x - y);
    }
  }

  /**
   * `before`, except that of two calls as urgent to different chats, the chat served least
   * recently goes first: where the bot-wide limit cannot serve every chat in a window, each
   * chat waits its turn once rather than the same chats (the last queued) every time.
   */
  #before(a: PaceItem, b: PaceItem): boolean {
    const same = Boolean(a.closes) === Boolean(b.closes) && a.urgency === b.urgency;
    if (same && a.lane !== b.lane) {
      const sa = this.#served.get(a.lane) ?? Number.NEGATIVE_INFINITY;
      const sb = this.#served.get(b.lane) ?? Number.NEGATIVE_INFINITY;
      if (sa !== sb) return sa < sb;
    }
    return before(a, b);
  }

  #bucket(key: string): Bucket {
    let b = this.#buckets.get(key);
    if (!b) {
      b = { finished: [], running: 0, due: Number.NEGATIVE_INFINITY };
      this.#buckets.set(key, b);
    }
    return b;
  }

  /** When a call of `urgency` (`burst`: allowed to burst) may next take a slot of this bucket. */
  #free(use: BucketUse, urgency: Urgency, burst: boolean, now: number): number {
    const { max, windowMs, reserve } = use.limit;
    const b = this.#buckets.get(use.key);
    if (!b) return now;
    const extra = use.limit.burst ?? 0;
    const token = extra > 0 ? tokenAt(b, max + extra, max / windowMs, now) : now;
    if (burst && extra > 0) return token;
    // Status edits leave `reserve` slots to urgent calls, the others `held` slots to
    // interactive ones (never fewer than one slot).
    const kept =
      urgency === 'status' ? reserve : urgency === 'interactive' ? 0 : (use.limit.held ?? 0);
    const cap = Math.max(1, max - kept);
    let at = Math.max(token, this.#windowFree(b, cap, windowMs, now));
    // While a person is at it, the other calls start spread over the window, so that a full
    // window frees a slot every windowMs / max and their next call waits about that long.
    const spread = use.limit.spread;
    if (spread && urgency !== 'interactive' && now - this.#lastInteractive <= spread.whileMs)
      at = Math.max(at, Math.floor(b.due));
    // Status edits spread over the window at the rate they may use, instead of spending it at
    // once: the scope's calls leave the rest of each window to the calls that matter.
    const statusBurst = use.limit.statusBurst;
    if (statusBurst && urgency === 'status')
      at = Math.max(at, tokenAt(b.status ?? UNUSED, statusBurst, (max - reserve) / windowMs, now));
    return at;
  }

  /** When a slot of `cap` per `windowMs` is free in `b`. */
  #windowFree(b: Bucket, cap: number, windowMs: number, now: number): number {
    if (b.running >= cap) return Number.POSITIVE_INFINITY;
    const inWindow = b.finished.filter((t) => t > now - windowMs);
    const excess = b.running + inWindow.length - cap;
    if (excess < 0) return now;
    // Once the `excess + 1` oldest calls in the window have left it, a slot is free.
    return inWindow[excess]! + windowMs;
  }
}

/**
 * When the token bucket over `b`'s calls (`capacity` tokens, refilled at `rate` per ms, full
 * before its first call; a running call holds a token) has a token, from `now` on.
 */
function tokenAt(b: TokenCalls, capacity: number, rate: number, now: number): number {
  if (b.running >= capacity) return Number.POSITIVE_INFINITY;
  let level = capacity;
  let last = Number.NEGATIVE_INFINITY;
  for (const t of b.finished) {
    level = Math.min(capacity, level + (t - last) * rate) - 1;
    last = t;
  }
  if (Number.isFinite(last)) level = Math.min(capacity, level + (now - last) * rate);
  level -= b.running;
  if (level >= 1 - EPSILON) return now;
  return now + Math.ceil((1 - level) / rate);
}

/** A progress edit (not one that closes a checkpoint). */
function isStatus(item: PaceItem): boolean {
  return item.urgency === 'status' && !item.closes;
}

/** Closing calls first, then the most urgent, then the first to become that urgent, then row order. */
function before(a: PaceItem, b: PaceItem): boolean {
  if (Boolean(a.closes) !== Boolean(b.closes)) return Boolean(a.closes);
  const ra = URGENCY_RANK[a.urgency];
  const rb = URGENCY_RANK[b.urgency];
  if (ra !== rb) return ra < rb;
  const oa = a.order ?? 0;
  const ob = b.order ?? 0;
  return oa !== ob ? oa < ob : a.id < b.id;
}
