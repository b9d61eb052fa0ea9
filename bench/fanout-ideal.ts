/**
 * The ideal schedule of the fan-out benchmark: the necessary messages only (per run and chat:
 * the status message, its final edit, the end notice), each released when the bridge first knew
 * it, placed greedily at the earliest moment Telegram's limits allow (1 per second per chat,
 * 20 per minute per group, 30 per second overall), a chat's messages in release order.
 *
 * With the bot's other calls beside the fan-out (a person pressing in a private chat), which
 * share the 30 a second, {@link idealWithOthers} also bounds the finish by counting: those calls
 * keep the times they had (a person's call is not put off for the fan-out), so the fan-out alone's
 * ideal is out of reach whenever they fall where it used every slot.
 */

/** One necessary message: to which chat, released when (ms from the start). */
export interface Necessary {
  readonly chat: number;
  readonly release: number;
}

/** A limit as the ideal applies it. */
export interface IdealLimits {
  readonly perChat: { max: number; windowMs: number };
  readonly perGroup: { max: number; windowMs: number };
  readonly overall: { max: number; windowMs: number };
}

/** Earliest t ≥ from with fewer than `max` of `times` (sorted) in (t - windowMs, t]. */
function freeAt(times: readonly number[], max: number, windowMs: number, from: number): number {
  let t = from;
  for (;;) {
    const inWindow = times.filter((x) => x > t - windowMs && x <= t + 0);
    // Calls later than t also constrain a call at t (they would share its window).
    const later = times.filter((x) => x > t && x < t + windowMs);
    if (inWindow.length + later.length < max) return t;
    const next = Math.min(...inWindow.map((x) => x + windowMs), ...later.map((x) => x + windowMs));
    if (!(next > t)) return t;
    t = next;
  }
}

/** When the last necessary message would arrive on the ideal schedule (ms from the start). */
export function idealFinish(messages: readonly Necessary[], limits: IdealLimits): number {
  const queues = new Map<number, number[]>();
  for (const m of messages) queues.set(m.chat, [...(queues.get(m.chat) ?? []), m.release]);
  for (const q of queues.values()) q.sort((a, b) => a - b);
  const perChat = new Map<number, number[]>();
  const overall: number[] = [];
  let last = 0;
  for (;;) {
    let best: { chat: number; at: number } | undefined;
    for (const [chat, q] of queues) {
      if (q.length === 0) continue;
      const mine = perChat.get(chat) ?? [];
      let at = q[0]!;
      // Repeat until one moment satisfies every limit at once.
      for (let i = 0; i < 50; i++) {
        const a1 = freeAt(mine, limits.perChat.max, limits.perChat.windowMs, at);
        const a2 = freeAt(mine, limits.perGroup.max, limits.perGroup.windowMs, a1);
        const a3 = freeAt(overall, limits.overall.max, limits.overall.windowMs, a2);
        if (a3 === at) break;
        at = a3;
      }
      if (!best || at < best.at) best = { chat, at };
    }
    if (!best) return last;
    queues.get(best.chat)!.shift();
    perChat.set(
      best.chat,
      [...(perChat.get(best.chat) ?? []), best.at].sort((a, b) => a - b),
    );
    overall.push(best.at);
    overall.sort((a, b) => a - b);
    last = Math.max(last, best.at);
  }
}

/**
 * A lower bound on the finish from the overall limit alone: for every release time r, the
 * necessary messages released at or after r, and the other calls made from r to the finish,
 * all arrive within [r, finish]. Each half-open window [r + k·w, r + (k+1)·w) holds at most
 * `max` calls (one window of the limit covers it), and a span of d ms is covered by
 * floor(d / w) + 1 of them, so n calls need finish ≥ r + (ceil(n / max) − 1) · w. `others`:
 * arrival times (ms from the start) of the calls that are not the fan-out's.
 */
export function overallBound(
  messages: readonly Necessary[],
  others: readonly number[],
  overall: IdealLimits['overall'],
  atLeast: number,
): number {
  const releases = [...new Set(messages.map((m) => m.release))].sort((a, b) => a - b);
  let finish = atLeast;
  // More time can take in more of the other calls: repeat until the bound holds still.
  for (;;) {
    let next = finish;
    for (const r of releases) {
      const n =
        messages.filter((m) => m.release >= r).length +
        others.filter((t) => t >= r && t <= finish).length;
      next = Math.max(next, r + (Math.ceil(n / overall.max) - 1) * overall.windowMs);
    }
    if (next === finish) return finish;
    finish = next;
  }
}

/** The ideal finish with the bot's other calls where they were: the larger of both bounds. */
export function idealWithOthers(
  messages: readonly Necessary[],
  limits: IdealLimits,
  others: readonly number[],
): number {
  return overallBound(messages, others, limits.overall, idealFinish(messages, limits));
}
