/**
 * The outbox scheduler's rules one by one, on hand-made limits tables and exact times: which
 * waiting call a chat sends next, when a call may start by its windows, reserves and token
 * bucket, and what a 429 takes away. pacer.test.ts checks the same rules as properties of random
 * traffic through the real Outbox; these pin the figures a user would see as delays.
 */
import { describe, expect, it } from 'vitest';
import type { PlatformLimits, RateLimit, Urgency } from '../../../src/bridges/outbox/limits.ts';
import { BURST_COOLDOWN_MS, type PaceItem, Pacer } from '../../../src/bridges/outbox/pacer.ts';

const NO_LIMITS: PlatformLimits = { platform: 'none', limits: [] };

/** One message per second per chat, 2 more in a burst for interactive calls (Telegram's chat row). */
const CHAT: RateLimit = { scope: 'chat', max: 1, windowMs: 1000, reserve: 0, burst: 2, source: '' };

/** Four calls per second for the whole bot: 2 kept from status edits, 1 only for interactive calls. */
const BOT: RateLimit = { scope: 'bot', max: 4, windowMs: 1000, reserve: 2, held: 1, source: '' };

function table(...limits: RateLimit[]): PlatformLimits {
  return { platform: 'test', limits };
}

function call(
  id: number,
  lane: string,
  over: Partial<Omit<PaceItem, 'id' | 'lane'>> = {},
): PaceItem {
  return { id, lane, kind: 'send', urgency: 'notice', notBefore: 0, ...over };
}

/** Makes `item` as a whole call: started, then answered at `at`. */
function made(p: Pacer, item: PaceItem, at: number): void {
  p.finished(item, p.started(item, at), at);
}

function startedId(p: Pacer, items: PaceItem[], now: number): number | undefined {
  const d = p.next(items, now);
  return 'start' in d ? d.start.id : undefined;
}

describe('which waiting call goes next', () => {
  it('a chat’s new messages leave in queue order, an edit may pass them, a closing call passes all', () => {
    const p = new Pacer(NO_LIMITS);
    const later = call(5, 'a', { urgency: 'decision' });
    const first = call(3, 'a', { urgency: 'status' });
    // The status send was queued first: a more urgent send queued after it waits.
    expect(startedId(p, [later, first], 0)).toBe(3);
    expect(startedId(p, [first, later], 0)).toBe(3);
    const edit = call(7, 'a', { kind: 'edit', urgency: 'interactive' });
    expect(startedId(p, [later, first, edit], 0)).toBe(7);
    const closing = call(9, 'a', { urgency: 'status', closes: true });
    expect(startedId(p, [later, first, edit, closing], 0)).toBe(9);
  });

  it('a closing send that must wait does not hold back the chat’s other sends', () => {
    const p = new Pacer(NO_LIMITS);
    const closing = call(1, 'a', { closes: true, notBefore: 500 });
    expect(p.next([closing, call(2, 'a')], 0)).toEqual({ start: call(2, 'a') });
  });

  it('an edit waiting for its back-off does not hold back a new message queued after it', () => {
    const p = new Pacer(NO_LIMITS);
    const edit = call(1, 'a', { kind: 'edit', notBefore: 500 });
    expect(startedId(p, [edit, call(2, 'a')], 0)).toBe(2);
  });

  it('among chats: closing first, then the most urgent, then the oldest', () => {
    const p = new Pacer(NO_LIMITS);
    const notice = (id: number, lane: string) => call(id, lane, { urgency: 'notice' });
    expect(startedId(p, [notice(4, 'a'), notice(2, 'b'), notice(3, 'c')], 0)).toBe(2);
    expect(startedId(p, [notice(1, 'a'), call(2, 'b', { urgency: 'decision' })], 0)).toBe(2);
    expect(startedId(p, [call(2, 'b', { urgency: 'decision' }), notice(1, 'a')], 0)).toBe(2);
    const closingStatus = call(10, 'a', { urgency: 'status', closes: true });
    const interactive = call(1, 'b', { urgency: 'interactive' });
    expect(startedId(p, [interactive, closingStatus], 0)).toBe(10);
    expect(startedId(p, [closingStatus, interactive], 0)).toBe(10);
    const closingNotice = call(11, 'c', { urgency: 'notice', closes: true });
    expect(startedId(p, [closingStatus, closingNotice], 0)).toBe(11);
  });

  it('a chat with a call in flight sends nothing more until it is answered', () => {
    const p = new Pacer(NO_LIMITS);
    const first = call(1, 'a');
    const uses = p.started(first, 0);
    expect([...p.busyLanes]).toEqual(['a']);
    expect(p.next([call(2, 'a')], 0)).toEqual({ idle: true });
    expect(startedId(p, [call(2, 'a'), call(3, 'b')], 0)).toBe(3);
    p.finished(first, uses, 10);
    expect([...p.busyLanes]).toEqual([]);
    expect(startedId(p, [call(2, 'a')], 10)).toBe(2);
  });

  it('a retry waits for its back-off: the soonest one says when to look again', () => {
    const p = new Pacer(NO_LIMITS);
    expect(p.next([], 0)).toEqual({ idle: true });
    const items = [call(1, 'a', { notBefore: 500 }), call(2, 'b', { notBefore: 300 })];
    expect(p.next(items, 0)).toEqual({ wakeAt: 300 });
    expect(startedId(p, items, 300)).toBe(2);
    expect(p.earliest(call(1, 'a', { notBefore: 500 }), 700)).toBe(700);
  });
});

describe('when a call may start', () => {
  it('one message per second in a chat; an interactive call bursts, up to the token bucket', () => {
    const p = new Pacer(table(CHAT));
    made(p, call(1, 'a'), 0);
    expect(p.next([call(2, 'a')], 0)).toEqual({ wakeAt: 1000 });
    expect(p.earliest(call(2, 'b'), 0)).toBe(0);
    const press = (id: number) => call(id, 'a', { kind: 'edit', urgency: 'interactive' });
    expect(p.earliest(press(3), 0)).toBe(0);
    made(p, press(3), 0);
    // The bucket holds 3: the third call of the burst goes, the fourth waits for a refill.
    expect(p.earliest(press(4), 0)).toBe(0);
    made(p, press(4), 0);
    expect(p.earliest(press(5), 0)).toBe(1000);
    expect(p.earliest(press(5), 1000)).toBe(1000);
  });

  it('a token refills at the window’s rate, rounded up to the next millisecond', () => {
    const p = new Pacer(table(CHAT));
    const press = (id: number) => call(id, 'a', { urgency: 'interactive' });
    for (const id of [1, 2, 3]) made(p, press(id), 0);
    expect(p.earliest(press(4), 0)).toBe(1000);
    // 1 ms later 1/1000 of a token is back: 999 ms to go.
    expect(p.earliest(press(4), 1)).toBe(1000);
    expect(p.earliest(press(4), 400)).toBe(1000);
    made(p, press(4), 1000);
    // The three calls at 0 still count: half a token at 1500, a whole one at 2000.
    expect(p.earliest(press(5), 1500)).toBe(2000);
  });

  it('float rounding in the token count never delays a call by a millisecond', () => {
    const p = new Pacer(table(CHAT));
    const press = (id: number) => call(id, 'a', { urgency: 'interactive' });
    made(p, press(1), 0);
    made(p, press(2), 0);
    expect(p.earliest(press(3), 39)).toBe(39);
    made(p, press(3), 39);
    // The bucket is one token up at 1000 (0.9999999999999999 in floats).
    expect(p.earliest(press(4), 1000)).toBe(1000);
  });

  it('a closing call is paced as an interactive one, whatever its own urgency', () => {
    const p = new Pacer(table(CHAT));
    made(p, call(1, 'a'), 10);
    expect(p.earliest(call(2, 'a', { kind: 'edit', urgency: 'status' }), 20)).toBe(1010);
    expect(p.earliest(call(2, 'a', { kind: 'edit', urgency: 'status', closes: true }), 20)).toBe(
      20,
    );
  });

  it('a 429 takes the chat’s burst away for a minute, and gives it back after', () => {
    const p = new Pacer(table(CHAT));
    const press = (id: number) => call(id, 'a', { urgency: 'interactive' });
    made(p, press(1), 10);
    p.rateLimited('a', 10);
    expect(p.bursting('a', 10)).toBe(false);
    expect(p.bursting('b', 10)).toBe(true);
    expect(p.earliest(press(2), 20)).toBe(1010);
    expect(p.bursting('a', 10 + BURST_COOLDOWN_MS - 1)).toBe(false);
    expect(p.bursting('a', 10 + BURST_COOLDOWN_MS)).toBe(true);
    made(p, press(2), 70_000);
    expect(p.earliest(press(3), 70_000)).toBe(70_000);
    expect(p.bursting('a', 70_000)).toBe(true);
  });

  it('status edits leave the reserved slots, other calls the held ones, to more urgent calls', () => {
    const p = new Pacer(table(BOT));
    const at = (urgency: Urgency) => p.earliest(call(99, 'z', { kind: 'edit', urgency }), 20);
    made(p, call(1, 'a'), 5);
    made(p, call(2, 'b'), 10);
    // 2 of 4 used: a status edit (2 slots) waits until the oldest call leaves the window.
    expect(at('status')).toBe(1005);
    expect(at('notice')).toBe(20);
    made(p, call(3, 'c'), 15);
    // 3 of 4: only an interactive call may take the last, held slot.
    expect(at('notice')).toBe(1005);
    expect(at('decision')).toBe(1005);
    expect(at('interactive')).toBe(20);
    made(p, call(4, 'd'), 15);
    expect(at('interactive')).toBe(1005);
  });

  it('calls in flight count: a bucket full of running calls frees only when one is answered', () => {
    const p = new Pacer(table(BOT));
    const a = call(1, 'a');
    const b = call(2, 'b');
    const ua = p.started(a, 0);
    p.started(b, 0);
    const status = call(3, 'c', { kind: 'edit', urgency: 'status' });
    expect(p.next([status], 20)).toEqual({ idle: true });
    expect(p.earliest(call(4, 'd'), 20)).toBe(20);
    p.finished(a, ua, 30);
    expect(p.next([status], 40)).toEqual({ wakeAt: 1030 });
  });

  it('a limit whose reserve is all of it still lets a status edit through, one per window', () => {
    const p = new Pacer(table({ scope: 'bot', max: 1, windowMs: 1000, reserve: 1, source: '' }));
    const status = (id: number) => call(id, 'a', { kind: 'edit', urgency: 'status' });
    expect(p.earliest(status(1), 0)).toBe(0);
    made(p, status(1), 100);
    expect(p.earliest(status(2), 200)).toBe(1100);
  });

  it('calls of the previous process count from their time, in time order', () => {
    const p = new Pacer(table({ scope: 'bot', max: 2, windowMs: 1000, reserve: 0, source: '' }));
    p.recordPast('a', 'send', 300);
    p.recordPast('b', 'send', 100);
    p.recordPast('c', 'send', 200);
    // Three calls in the window of a limit of two: two of them must leave it first.
    expect(p.earliest(call(1, 'd'), 400)).toBe(1200);
    expect(p.earliest(call(1, 'd'), 1150)).toBe(1200);
    expect(p.earliest(call(1, 'd'), 1200)).toBe(1200);
  });

  it('a call still counts right after it was answered, however old the bucket', () => {
    const p = new Pacer(table(CHAT));
    made(p, call(1, 'a'), 5000);
    expect(p.earliest(call(2, 'a'), 5000)).toBe(6000);
    made(p, call(2, 'a'), 6000);
    expect(p.earliest(call(3, 'a'), 6500)).toBe(7000);
  });

  it('a call limited only for other kinds goes at once', () => {
    const p = new Pacer(table({ ...CHAT, kinds: ['send'] }));
    made(p, call(1, 'a'), 10);
    expect(p.earliest(call(2, 'a'), 20)).toBe(1010);
    expect(p.earliest(call(2, 'a', { kind: 'edit' }), 20)).toBe(20);
  });
});

describe('an edit answering a press through its own response (direct)', () => {
  it('starts beside its chat’s call in flight and in a full window; its chat waits for both', () => {
    const p = new Pacer(table(CHAT, BOT));
    const inFlight = call(1, 'a', { kind: 'edit' });
    const uses = p.started(inFlight, 0);
    for (let i = 0; i < 3; i++) made(p, call(10 + i, `b${i}`), 0);
    const plain = call(2, 'a', { kind: 'edit', urgency: 'interactive' });
    const direct = { ...plain, direct: true };
    // Not direct: the chat is busy and the bot's window is full.
    expect(p.next([plain], 10)).toEqual({ idle: true });
    expect(startedId(p, [direct], 10)).toBe(2);
    const directUses = p.started(direct, 0);
    expect(directUses).toEqual([]);
    // The chat's next call waits for both calls in flight.
    p.finished(inFlight, uses, 20);
    expect(p.next([call(4, 'a')], 30)).toEqual({ idle: true });
    p.finished(direct, directUses, 40);
    expect(p.busyLanes.has('a')).toBe(false);
  });

  it('counts in no window: five of them leave a four-a-second window free', () => {
    const p = new Pacer(table(BOT));
    for (let i = 0; i < 5; i++) made(p, call(i, `p${i}`, { kind: 'edit', direct: true }), 10);
    expect(p.earliest(call(9, 'c'), 20)).toBe(20);
    for (let i = 0; i < 3; i++) made(p, call(20 + i, `q${i}`), 10);
    // Three ordinary calls do count: they fill what a notice may take (4 less the held slot).
    expect(p.earliest(call(9, 'c'), 20)).toBe(1010);
  });
});

describe('spread starts (a bot-wide row’s `spread`)', () => {
  /** Ten a second; after an interactive call, 3 at once, then one every 100 ms, for 5 s. */
  const SPREAD: RateLimit = {
    scope: 'bot',
    max: 10,
    windowMs: 1000,
    reserve: 0,
    spread: { atOnce: 3, whileMs: 5000 },
    source: '',
  };

  it('no one at it: the window’s calls all start at once', () => {
    const p = new Pacer(table(SPREAD));
    for (let i = 0; i < 10; i++) {
      expect(p.earliest(call(i, `g${i}`), 0)).toBe(0);
      p.started(call(i, `g${i}`), 0);
    }
  });

  it('after an interactive call: a few at once, then one a slot; the person’s next call at once', () => {
    const p = new Pacer(table(SPREAD));
    made(p, call(1, 'me', { urgency: 'interactive' }), 0);
    const starts: number[] = [];
    for (let i = 0; i < 6; i++) {
      const item = call(10 + i, `g${i}`);
      const at = p.earliest(item, starts.at(-1) ?? 10);
      p.started(item, at);
      starts.push(at);
    }
    // The person's call at 0 was one of the three: two more at once, then one every 100 ms.
    expect(starts).toEqual([10, 10, 100, 200, 300, 400]);
    // Interactive calls are not spread: a slot of the window is all they need.
    expect(p.earliest(call(30, 'me', { urgency: 'interactive' }), 410)).toBe(410);
    // The person gone quiet for `whileMs`, the calls go at once again.
    expect(p.earliest(call(31, 'g9'), 6000)).toBe(6000);
  });
});
