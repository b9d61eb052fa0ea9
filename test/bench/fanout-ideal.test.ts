/**
 * The fan-out bench's ideal (bench/fanout-ideal.ts): with the bot's other calls beside the
 * fan-out, the counting bound never lies above a schedule the limits allow (it must be a lower
 * bound, or the bench's ratio would flatter the outbox), and it is reached where it says.
 */
import { describe, expect, it } from 'vitest';
import {
  type IdealLimits,
  idealFinish,
  idealWithOthers,
  type Necessary,
  overallBound,
} from '../../bench/fanout-ideal.ts';

const LIMITS: IdealLimits = {
  perChat: { max: 1, windowMs: 1000 },
  perGroup: { max: 20, windowMs: 60_000 },
  overall: { max: 30, windowMs: 1000 },
};

/** `count` messages to each of `chats` chats, all released at `at`. */
function burst(chats: number, count: number, at = 0): Necessary[] {
  return Array.from({ length: chats * count }, (_, i) => ({ chat: i % chats, release: at }));
}

/** True when `times` (per chat) and `others` keep every limit (windows (t − w, t]). */
function allowed(byChat: Map<number, number[]>, others: readonly number[], l: IdealLimits) {
  const within = (ts: readonly number[], max: number, w: number) =>
    ts.every((t) => ts.filter((u) => u > t - w && u <= t).length <= max);
  const all = [...[...byChat.values()].flat(), ...others];
  return (
    within(all, l.overall.max, l.overall.windowMs) &&
    [...byChat.values()].every(
      (ts) => within(ts, l.perChat.max, l.perChat.windowMs) && within(ts, l.perGroup.max, 60_000),
    )
  );
}

/**
 * A schedule the limits allow, with `others` fixed where they are: each message in release
 * order at the first whole-ms moment every window has room (not the best one: an upper bound).
 */
function someSchedule(messages: readonly Necessary[], others: readonly number[], l: IdealLimits) {
  const byChat = new Map<number, number[]>();
  const placed: number[] = [...others];
  const fits = (ts: readonly number[], t: number, max: number, w: number) =>
    ts.filter((u) => u > t - w && u < t + w).length < max;
  let finish = 0;
  for (const m of [...messages].sort((a, b) => a.release - b.release)) {
    const mine = byChat.get(m.chat) ?? [];
    let t = Math.max(m.release, mine.at(-1) ?? 0);
    while (
      !fits(mine, t, l.perChat.max, l.perChat.windowMs) ||
      !fits(mine, t, l.perGroup.max, l.perGroup.windowMs) ||
      !fits(placed, t, l.overall.max, l.overall.windowMs)
    ) {
      t += 1;
    }
    mine.push(t);
    byChat.set(m.chat, mine);
    placed.push(t);
    finish = Math.max(finish, t);
  }
  return { finish, byChat };
}

describe('the fan-out ideal with the bot’s other calls', () => {
  it('is the fan-out alone’s ideal when nothing else calls', () => {
    const messages = burst(30, 10);
    expect(idealFinish(messages, LIMITS)).toBe(9000);
    expect(idealWithOthers(messages, LIMITS, [])).toBe(9000);
  });

  it('one call beside a fan-out that fills every second costs it a second, and no more', () => {
    const messages = burst(30, 10);
    expect(idealWithOthers(messages, LIMITS, [4500])).toBe(10_000);
    // Reached: 30 calls at each whole second, but chat 29 skips 4 s and chat 28 skips 5 s (the
    // other call's windows) and both go at 10 s.
    const byChat = new Map<number, number[]>();
    const seconds = (skip: number) =>
      Array.from({ length: 11 }, (_, k) => k * 1000).filter((t) => t !== skip);
    for (let c = 0; c < 28; c++) byChat.set(c, seconds(10_000));
    byChat.set(28, seconds(5000));
    byChat.set(29, seconds(4000));
    expect(Math.max(...[...byChat.values()].flat())).toBe(10_000);
    expect(allowed(byChat, [4500], LIMITS)).toBe(true);
  });

  it('counts only the other calls within the fan-out’s span', () => {
    const messages = burst(30, 10, 1000);
    expect(idealWithOthers(messages, LIMITS, [0, 500, 999])).toBe(10_000);
    expect(idealWithOthers(messages, LIMITS, [0, 500, 1000])).toBe(11_000);
  });

  it('never lies above a schedule the limits allow (random fan-outs and presses)', () => {
    let seed = 7;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    for (let round = 0; round < 40; round++) {
      const chats = 2 + Math.floor(random() * 8);
      const limits = { ...LIMITS, overall: { max: 2 + Math.floor(random() * 6), windowMs: 1000 } };
      const messages: Necessary[] = [];
      for (let i = 0; i < chats * 4; i++) {
        messages.push({ chat: i % chats, release: Math.floor(random() * 4) * 500 });
      }
      // At most one a second (they must keep the limit themselves), anywhere in it.
      const others = [0, 1, 2, 3, 4, 5]
        .filter(() => random() < 0.6)
        .map((k) => k * 1000 + Math.floor(random() * 1000));
      const schedule = someSchedule(messages, others, limits);
      expect(allowed(schedule.byChat, others, limits)).toBe(true);
      expect(overallBound(messages, others, limits.overall, 0)).toBeLessThanOrEqual(
        schedule.finish,
      );
    }
  });
});
