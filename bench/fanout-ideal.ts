/**
 * The ideal schedule of the fan-out benchmark: the necessary messages only (per run and chat:
 * the status message, its final edit, the end notice), each released when the bridge first knew
 * it, placed greedily at the earliest moment Telegram's limits allow (1 per second per chat,
 * 20 per minute per group, 30 per second overall), a chat's messages in release order.
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
