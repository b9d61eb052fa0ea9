/**
 * The timeline of bench/fanout.ts (`FANOUT_TRACE=timeline`): each call the outbox hands to the
 * adapter, when its content was queued, when its chat's window let it go (the pacer's rule: the
 * previous call's answer + 1 s), when the bot-wide window had a slot for it, when the timer that
 * started it was due and fired, its start and its answer. Summed over the calls of the fan-out's
 * tail (from the first run's end), it says where the time between the ideal (1 s per call and
 * chat) and the actual pace went: the round trip, the wait for a bot-wide slot, late timers, or
 * anything else (the event loop).
 */
import type { Channel } from '../src/bridges/channel.ts';
import type { OutgoingMessage } from '../src/bridges/messages.ts';
import type { OutboxTimers } from '../src/bridges/outbox/outbox-options.ts';
import { plainTextOf } from '../src/bridges/render-text.ts';

/** One call handed to the adapter. */
interface Call {
  readonly lane: string;
  readonly kind: 'send' | 'edit';
  readonly target: string;
  readonly urgency: string;
  readonly start: number;
  answer: number;
  /** The timer whose callback started it (undefined: started by an answer or a commit). */
  readonly timer: { due: number; fired: number } | undefined;
}

/** One send or edit given to the outbox (what bench/fanout-replay.ts plays again). */
export interface Queued {
  readonly kind: 'send' | 'edit';
  readonly target: string;
  readonly at: number;
  readonly urgency: string | undefined;
  /** The message's plain text, its first 80 characters. */
  readonly text: string;
  /** A send's message ref once answered. */
  ref?: string;
}

/** Records the calls and timers of one scenario; `report` sums them up. */
export class Timeline {
  readonly calls: Call[] = [];
  readonly queued: Queued[] = [];
  #firing: { due: number; fired: number } | undefined;

  /** Real timers that note when each callback was due and when it ran. */
  timers(): OutboxTimers {
    return {
      now: () => Date.now(),
      setTimeout: (fn, ms) => {
        const due = Date.now() + Math.max(0, ms);
        return setTimeout(() => {
          this.#firing = { due, fired: Date.now() };
          try {
            fn();
          } finally {
            this.#firing = undefined;
          }
        }, ms);
      },
      clearTimeout: (h) => clearTimeout(h as ReturnType<typeof setTimeout>),
    };
  }

  /** `inner` with its sends and edits timed (the outbox calls these). */
  adapter(inner: Channel): Channel {
    const record = (kind: 'send' | 'edit', target: string, message: OutgoingMessage) => {
      const call: Call = {
        lane: laneOfRef(target),
        kind,
        target,
        urgency: message.urgency ?? (kind === 'send' ? 'notice' : 'status'),
        start: Date.now(),
        answer: Number.NaN,
        timer: this.#firing,
      };
      this.calls.push(call);
      return call;
    };
    return new Proxy(inner, {
      get: (target, prop) => {
        if (prop === 'send' || prop === 'edit') {
          return async (ref: string, message: OutgoingMessage) => {
            const call = record(prop, ref, message);
            try {
              return await (prop === 'send'
                ? target.send(ref, message)
                : target.edit(ref, message));
            } finally {
              call.answer = Date.now();
            }
          };
        }
        const value = Reflect.get(target, prop, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
  }

  /** `outer` (the outbox's channel) with the time each send and edit was queued noted. */
  queueing(outer: Channel): Channel {
    return new Proxy(outer, {
      get: (target, prop) => {
        if (prop === 'send' || prop === 'edit') {
          return async (ref: string, message: OutgoingMessage) => {
            const q: Queued = {
              kind: prop,
              target: ref,
              at: Date.now(),
              urgency: message.urgency,
              text: plainTextOf(message.text).slice(0, 80),
            };
            this.queued.push(q);
            if (prop === 'edit') return target.edit(ref, message);
            q.ref = await target.send(ref, message);
            return q.ref;
          };
        }
        const value = Reflect.get(target, prop, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
  }

  /**
   * Where the tail's time went, from `from` (ms after `t0`: the first run's end) on, for the
   * calls of `lanes` (the fan-out's groups); `botCap` is the bot-wide slots a non-interactive call
   * may take (max less held).
   */
  report(t0: number, lanes: ReadonlySet<string>, from: number, botCap: number, windowMs = 1000) {
    const t = (x: number) => x - t0;
    const byLane = new Map<string, Call[]>();
    for (const c of this.calls) byLane.set(c.lane, [...(byLane.get(c.lane) ?? []), c]);
    const sendQueues = new Map<string, number[]>();
    const editQueues = new Map<string, number[]>();
    for (const q of this.queued) {
      const m = q.kind === 'send' ? sendQueues : editQueues;
      const key = q.kind === 'send' ? laneOfRef(q.target) : q.target;
      m.set(key, [...(m.get(key) ?? []), q.at]);
    }
    const sum = { calls: 0, rttMs: 0, botMs: 0, timerLateMs: 0, otherMs: 0 };
    const rows = new Map<string, string[]>();
    for (const [lane, calls] of byLane) {
      if (!lanes.has(lane)) continue;
      let prev: Call | undefined;
      for (const c of calls) {
        // When its content was queued: a send's in queue order, an edit's oldest waiting one.
        const queue = c.kind === 'send' ? sendQueues.get(lane) : editQueues.get(c.target);
        let queuedAt = c.start;
        if (queue) {
          if (c.kind === 'send') queuedAt = queue.shift() ?? c.start;
          else {
            const waiting = queue.filter((x) => x <= c.start);
            queuedAt = waiting[0] ?? c.start;
            editQueues.set(
              c.target,
              queue.filter((x) => x > c.start),
            );
          }
        }
        const chatOpen = prev ? prev.answer + windowMs : Number.NEGATIVE_INFINITY;
        const ready = Math.max(queuedAt, chatOpen);
        const botOpen = this.#botOpen(c, botCap, windowMs);
        const afterBot = Math.max(ready, Math.min(botOpen, c.start));
        const timerLate = c.timer
          ? Math.max(0, c.timer.fired - Math.max(c.timer.due, afterBot))
          : 0;
        if (t(c.start) >= from) {
          sum.calls++;
          sum.rttMs += c.answer - c.start;
          sum.botMs += afterBot - ready;
          sum.timerLateMs += timerLate;
          sum.otherMs += c.start - afterBot - timerLate;
        }
        rows.set(lane, [...(rows.get(lane) ?? [])]);
        rows
          .get(lane)!
          .push(
            ` ${c.kind} ${c.urgency} queued=${t(queuedAt)} chat=${Number.isFinite(chatOpen) ? t(chatOpen) : '-'} bot=${Number.isFinite(botOpen) ? t(botOpen) : '-'} timer=${c.timer ? `${t(c.timer.due)}/${t(c.timer.fired)}` : '-'} start=${t(c.start)} answer=${t(c.answer)}`,
          );
        prev = c;
      }
    }
    const others = this.calls.filter((c) => !lanes.has(c.lane) && t(c.start) >= from).length;
    const last = Math.max(...this.calls.map((c) => t(c.start)));
    const per = (x: number) => +(x / Math.max(1, sum.calls)).toFixed(1);
    return {
      rows,
      tail: {
        calls: sum.calls,
        other_chats_calls: others,
        span_ms: last - from,
        rtt_ms_per_call: per(sum.rttMs),
        bot_wait_ms_per_call: per(sum.botMs),
        timer_late_ms_per_call: per(sum.timerLateMs),
        other_ms_per_call: per(sum.otherMs),
      },
    };
  }

  /**
   * When the bot-wide window had a slot for `c` among `cap`: the `cap`-th latest end of the
   * calls started before it (a call holds its slot until its answer + the window).
   */
  #botOpen(c: Call, cap: number, windowMs: number): number {
    const ends = this.calls
      .filter((o) => o !== c && o.start <= c.start)
      .map((o) => o.answer + windowMs)
      .sort((a, b) => b - a);
    return ends.length < cap ? Number.NEGATIVE_INFINITY : ends[cap - 1]!;
  }
}

/** The chat of a chat or message ref (`telegram:<chat>` or `telegram:<chat>/<message>`). */
function laneOfRef(ref: string): string {
  return ref.split('/')[0]!;
}
