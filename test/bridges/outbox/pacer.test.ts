/**
 * The outbox scheduler property-tested on a simulated clock: random sends and edits to group and
 * private chats at random times, with random platform latencies, through the real Outbox, its
 * SQLite rows and the Telegram (and Slack) limits tables. Whatever the traffic: no limit is
 * exceeded in any window (a limit with a burst: only an interactive call goes over its window,
 * and never past its token bucket), the latest edit of a message is the one that stays, a chat's
 * messages arrive in order, a more urgent call is never passed by a less urgent one of its chat,
 * and every send is delivered exactly once.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Urgency } from '../../../src/bridges/messages.ts';
import {
  bucketsFor,
  laneOf,
  type PlatformLimits,
  type RateLimit,
  SLACK_LIMITS,
  TELEGRAM_LIMITS,
  URGENCY_RANK,
} from '../../../src/bridges/outbox/limits.ts';
import { Outbox } from '../../../src/bridges/outbox/outbox.ts';
import { OutboxStore } from '../../../src/bridges/outbox/store.ts';
import { plain } from '../../../src/bridges/render-text.ts';
import { migrateToLatest, openBridgeDb } from '../../../src/db/connection.ts';
import { type SimCall, SimClock, SimPlatform } from './sim.ts';

const TELEGRAM_CHATS = ['telegram:-1001', 'telegram:-1002', 'telegram:501', 'telegram:502'];
const SLACK_CHATS = ['slack:T1:C1', 'slack:T1:C2', 'slack:T2:C3'];

interface Op {
  gap: number;
  chat: number;
  kind: 'send' | 'edit';
  urgency: Urgency;
  pick: number;
}

const URGENCIES: readonly Urgency[] = ['interactive', 'decision', 'notice', 'status', 'status'];

const opArb = (chats: number, urgencies: readonly Urgency[] = URGENCIES): fc.Arbitrary<Op> =>
  fc.record({
    gap: fc.oneof(
      fc.constant(0),
      fc.integer({ min: 0, max: 20 }),
      fc.integer({ min: 0, max: 300 }),
      fc.integer({ min: 0, max: 2500 }),
    ),
    // Chat 0 gets half the traffic, so its queue is long enough for urgency to matter.
    chat: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: chats - 1 })),
    kind: fc.constantFrom<'send' | 'edit'>('send', 'edit', 'edit'),
    urgency: fc.constantFrom<Urgency>(...urgencies),
    pick: fc.nat(),
  });

interface Enqueued {
  label: string;
  kind: 'send' | 'edit';
  target: string;
  urgency: Urgency;
  seq: number;
}

interface Outcome {
  calls: (SimCall & { seq: number })[];
  enqueued: Map<string, Enqueued>;
  lastEdit: Map<string, string>;
  settled: number;
  sends: number;
}

/** Plays `ops` through a real Outbox over a fresh bridge.db and a simulated platform. */
async function play(
  table: PlatformLimits,
  chats: readonly string[],
  ops: readonly Op[],
  latency: number[],
): Promise<Outcome> {
  const db = openBridgeDb({ file: ':memory:' });
  await migrateToLatest(db);
  const clock = new SimClock();
  const platform = new SimPlatform(
    table.platform as 'telegram',
    clock,
    (i) => latency[i % latency.length]!,
  );
  let seq = 0;
  const calls: (SimCall & { seq: number })[] = [];
  const inner = new Proxy(platform, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (prop !== 'send' && prop !== 'edit') return value;
      return (...args: unknown[]) => {
        const result = (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        calls.push(Object.assign(target.calls.at(-1)!, { seq: seq++ }));
        return result;
      };
    },
  });
  const outbox = new Outbox({
    store: OutboxStore.on(db.sqlite, () => clock.now()),
    inner,
    limits: table,
    timers: clock,
  });
  outbox.start();
  const refs = new Map<string, string[]>();
  const enqueued = new Map<string, Enqueued>();
  const lastEdit = new Map<string, string>();
  let settled = 0;
  let sends = 0;
  let t = 0;
  for (const [i, op] of ops.entries()) {
    t += op.gap;
    await clock.runUntil(t);
    const chat = chats[op.chat]!;
    const label = `m${i}`;
    const message = { text: [plain(label)], urgency: op.urgency };
    if (op.kind === 'send') {
      sends++;
      enqueued.set(label, { label, kind: 'send', target: chat, urgency: op.urgency, seq: seq++ });
      void outbox.enqueue('send', chat, message).then((ref) => {
        settled++;
        refs.set(chat, [...(refs.get(chat) ?? []), ref!]);
      });
      continue;
    }
    const known = refs.get(chat) ?? [];
    if (known.length === 0) continue;
    const target = known[op.pick % known.length]!;
    enqueued.set(label, { label, kind: 'edit', target, urgency: op.urgency, seq: seq++ });
    lastEdit.set(target, label);
    void outbox.enqueue('edit', target, message).then(() => settled++);
  }
  await clock.runAll();
  await db.close();
  return { calls, enqueued, lastEdit, settled, sends };
}

/**
 * No bucket of the table saw more than `max` calls start in any window of `windowMs` before a
 * call that is not interactive; where the limit has a burst, interactive calls may start inside
 * such a window, but every call finds a token in the bucket of `max + burst` refilled at `max`
 * per window.
 */
function expectWithinLimits(table: PlatformLimits, o: Outcome): void {
  const { calls } = o;
  // An edit call carries the edits of its message coalesced into it: interactive if one was.
  const groups = editGroups(o);
  const interactive = (c: SimCall) =>
    (groups.get(c) ?? [o.enqueued.get(c.text)!]).some((e) => e.urgency === 'interactive');
  const byBucket = new Map<string, { calls: SimCall[]; limit: RateLimit }>();
  for (const call of calls) {
    for (const use of bucketsFor(table, laneOf(call.target), call.kind)) {
      const b = byBucket.get(use.key) ?? { calls: [], limit: use.limit };
      b.calls.push(call);
      byBucket.set(use.key, b);
    }
  }
  for (const [key, { calls: inBucket, limit }] of byBucket) {
    const sorted = [...inBucket].sort((x, y) => x.startedAt - y.startedAt);
    const burst = limit.burst ?? 0;
    for (const c of sorted) {
      if (burst > 0 && interactive(c)) continue;
      const inWindow = sorted.filter(
        (o) => o.startedAt > c.startedAt - limit.windowMs && o.startedAt <= c.startedAt,
      ).length;
      expect(inWindow, `bucket ${key} at ${c.startedAt}`).toBeLessThanOrEqual(limit.max);
    }
    if (burst === 0) continue;
    const capacity = limit.max + burst;
    const rate = limit.max / limit.windowMs;
    let level = capacity;
    let last = Number.NEGATIVE_INFINITY;
    for (const c of sorted) {
      level = Math.min(capacity, level + (c.startedAt - last) * rate);
      expect(level, `token of bucket ${key} at ${c.startedAt}`).toBeGreaterThanOrEqual(1 - 1e-9);
      level -= 1;
      last = c.startedAt;
    }
  }
}

function expectOrderAndPriority(o: Outcome): void {
  const deliveredEdits = new Map<string, Enqueued[]>();
  const sendsByLane = new Map<string, number[]>();
  for (const call of o.calls) {
    const e = o.enqueued.get(call.text)!;
    if (e.kind === 'edit') {
      deliveredEdits.set(e.target, [...(deliveredEdits.get(e.target) ?? []), e]);
    } else {
      const lane = laneOf(e.target);
      sendsByLane.set(lane, [...(sendsByLane.get(lane) ?? []), e.seq]);
    }
  }
  // Latest edit wins, and no older content is delivered after a newer one.
  for (const [target, label] of o.lastEdit) {
    const edits = deliveredEdits.get(target) ?? [];
    expect(edits.at(-1)?.label, `last edit of ${target}`).toBe(label);
    expect(edits.map((e) => e.seq)).toEqual([...edits.map((e) => e.seq)].sort((a, b) => a - b));
  }
  // A chat's new messages arrive in the order they were queued.
  for (const seqs of sendsByLane.values()) expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
  // A more urgent edit queued before a less urgent call of its chat started goes first. An edit
  // call stands for every edit of its message queued since the previous call of that message
  // (they coalesced into one row: the oldest row's place in the queue, the highest urgency), so
  // a call is as urgent as the most urgent edit it carries, and an edit waiting when `b` started
  // was as urgent as the most urgent of its group queued by then.
  const groups = editGroups(o);
  for (const a of o.calls) {
    const ga = groups.get(a);
    if (!ga) continue;
    for (const b of o.calls) {
      if (b === a || laneOf(b.target) !== laneOf(a.target)) continue;
      const eb = o.enqueued.get(b.text)!;
      const rankB = groups.has(b) ? rankOf(groups.get(b)!) : URGENCY_RANK[eb.urgency];
      const waitingThen = ga.filter((e) => e.seq < b.seq);
      if (waitingThen.length === 0 || rankOf(waitingThen) >= rankB) continue;
      const la = o.enqueued.get(a.text)!.label;
      expect(
        a.seq,
        `${la} (as urgent as ${urgencyOf(waitingThen)}) before ${eb.label}`,
      ).toBeLessThan(b.seq);
    }
  }
}

/** For each edit call, the queued edits of its message it delivered (coalesced into it). */
function editGroups(o: Outcome): Map<SimCall, Enqueued[]> {
  const groups = new Map<SimCall, Enqueued[]>();
  const lastSeq = new Map<string, number>();
  for (const call of o.calls) {
    const e = o.enqueued.get(call.text)!;
    if (e.kind !== 'edit') continue;
    const after = lastSeq.get(e.target) ?? -1;
    groups.set(
      call,
      [...o.enqueued.values()].filter(
        (x) => x.kind === 'edit' && x.target === e.target && x.seq > after && x.seq <= e.seq,
      ),
    );
    lastSeq.set(e.target, e.seq);
  }
  return groups;
}

function rankOf(edits: readonly Enqueued[]): number {
  return Math.min(...edits.map((e) => URGENCY_RANK[e.urgency]));
}

function urgencyOf(edits: readonly Enqueued[]): Urgency {
  return edits.reduce(
    (u, e) => (URGENCY_RANK[e.urgency] < URGENCY_RANK[u] ? e.urgency : u),
    'status' as Urgency,
  );
}

describe('the outbox scheduler on a simulated clock', () => {
  it('Telegram: limits hold in every window, latest edit wins, order and urgency hold, nothing lost', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(opArb(TELEGRAM_CHATS.length), { minLength: 1, maxLength: 70 }),
        fc.array(fc.integer({ min: 1, max: 400 }), { minLength: 1, maxLength: 8 }),
        async (ops, latency) => {
          const o = await play(TELEGRAM_LIMITS, TELEGRAM_CHATS, ops, latency);
          expectWithinLimits(TELEGRAM_LIMITS, o);
          expectOrderAndPriority(o);
          const sent = o.calls.filter((c) => c.kind === 'send').map((c) => c.text);
          expect(new Set(sent).size).toBe(sent.length);
          expect(sent.length).toBe(o.sends);
          expect(o.settled).toBe(o.enqueued.size);
        },
      ),
      { numRuns: 80 },
    );
  });

  it('Telegram, mostly interactive calls: a burst never goes past the chat’s token bucket', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(opArb(TELEGRAM_CHATS.length, ['interactive', 'interactive', 'status']), {
          minLength: 1,
          maxLength: 40,
        }),
        fc.array(fc.integer({ min: 1, max: 200 }), { minLength: 1, maxLength: 4 }),
        async (ops, latency) => {
          const o = await play(TELEGRAM_LIMITS, TELEGRAM_CHATS, ops, latency);
          expectWithinLimits(TELEGRAM_LIMITS, o);
          expectOrderAndPriority(o);
          expect(o.settled).toBe(o.enqueued.size);
        },
      ),
      { numRuns: 40 },
    );
  });

  it('Slack: chat.postMessage per channel and chat.update per workspace stay within their limits', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(opArb(SLACK_CHATS.length), { minLength: 1, maxLength: 90 }),
        fc.array(fc.integer({ min: 1, max: 300 }), { minLength: 1, maxLength: 8 }),
        async (ops, latency) => {
          const o = await play(SLACK_LIMITS, SLACK_CHATS, ops, latency);
          expectWithinLimits(SLACK_LIMITS, o);
          expect(o.settled).toBe(o.enqueued.size);
        },
      ),
      { numRuns: 30 },
    );
  });

  it('a decision edit queued after a notice of its chat goes out first', async () => {
    const ops: Op[] = [
      { gap: 0, chat: 2, kind: 'send', urgency: 'notice', pick: 0 },
      { gap: 100, chat: 2, kind: 'send', urgency: 'notice', pick: 0 },
      { gap: 10, chat: 2, kind: 'edit', urgency: 'status', pick: 0 },
      { gap: 10, chat: 2, kind: 'edit', urgency: 'decision', pick: 1 },
    ];
    const o = await play(TELEGRAM_LIMITS, TELEGRAM_CHATS, ops, [10]);
    expect(o.calls.map((c) => c.text)).toEqual(['m0', 'm3', 'm1']);
    expectOrderAndPriority(o);
  });

  it('a merged edit keeps its row’s place and highest urgency, so it passes a notice queued after', async () => {
    // The shrunk case of a failure of the property above, before it knew of coalescing: m5
    // (status) merges into m3's waiting row (decision), and that row goes before m4 (notice).
    const ops: Op[] = [
      { gap: 0, chat: 2, kind: 'send', urgency: 'notice', pick: 0 },
      { gap: 1100, chat: 2, kind: 'send', urgency: 'notice', pick: 0 },
      { gap: 1200, chat: 2, kind: 'edit', urgency: 'status', pick: 0 },
      { gap: 10, chat: 2, kind: 'edit', urgency: 'decision', pick: 1 },
      { gap: 10, chat: 2, kind: 'edit', urgency: 'notice', pick: 0 },
      { gap: 10, chat: 2, kind: 'edit', urgency: 'status', pick: 1 },
    ];
    const o = await play(TELEGRAM_LIMITS, TELEGRAM_CHATS, ops, [10]);
    expect(o.calls.map((c) => c.text)).toEqual(['m0', 'm1', 'm2', 'm5', 'm4']);
    expectOrderAndPriority(o);
  });

  it('a burst of status edits to one group leaves the reserved slots for the run’s final notices', async () => {
    const ops: Op[] = [{ gap: 0, chat: 0, kind: 'send', urgency: 'notice', pick: 0 }];
    for (let i = 0; i < 40; i++)
      ops.push({ gap: 100, chat: 0, kind: 'edit', urgency: 'status', pick: 0 });
    for (let i = 0; i < 9; i++)
      ops.push({ gap: 0, chat: 0, kind: 'send', urgency: 'notice', pick: 0 });
    const o = await play(TELEGRAM_LIMITS, TELEGRAM_CHATS, ops, [10]);
    const status = o.calls.filter((c) => o.enqueued.get(c.text)!.urgency === 'status');
    const notices = o.calls.filter((c) => c.kind === 'send');
    // 1 send + at most 9 status edits fill 10 of the minute's 20 slots; the 9 notices fit in the rest.
    expect(status.filter((c) => c.startedAt < 60_000).length).toBeLessThanOrEqual(9);
    expect(notices.at(-1)!.startedAt).toBeLessThan(60_000);
    expect(o.settled).toBe(o.enqueued.size);
  });
  it('an edit queued in the turn its predecessor starts keeps its own urgency', async () => {
    const db = openBridgeDb({ file: ':memory:' });
    await migrateToLatest(db);
    const clock = new SimClock();
    const platform = new SimPlatform('telegram', clock, () => 10);
    const outbox = new Outbox({
      store: OutboxStore.on(db.sqlite, () => clock.now()),
      inner: platform,
      limits: TELEGRAM_LIMITS,
      timers: clock,
    });
    outbox.start();
    const say = (label: string, urgency: Urgency) => ({ text: [plain(label)], urgency });
    const first = outbox.enqueue('send', 'telegram:501', say('one', 'notice'));
    await clock.runUntil(1100);
    const second = outbox.enqueue('send', 'telegram:501', say('two', 'notice'));
    await clock.runUntil(2300);
    const [one, two] = [(await first)!, (await second)!];
    void outbox.enqueue('edit', two, say('progress', 'status'));
    await clock.runUntil(2350);
    // Both wait for the chat's next slot (3310); the decision goes first.
    void outbox.enqueue('edit', one, say('decided', 'decision'));
    void outbox.enqueue('edit', two, say('finished', 'notice'));
    await clock.runUntil(2400);
    // A status edit of `one` queued while 'decided' waits, but that starts in this same turn,
    // before the edit is committed: it cannot replace it any more and must not inherit its
    // urgency, or it would pass the notice queued before it.
    void outbox.enqueue('edit', one, say('later progress', 'status'));
    clock.fireNow(3310);
    await clock.runAll();
    expect(platform.calls.map((c) => c.text)).toEqual([
      'one',
      'two',
      'progress',
      'decided',
      'finished',
      'later progress',
    ]);
    await db.close();
  });
});
