/**
 * Plays a fan-out again on a simulated clock: the sends and edits one run of bench/fanout.ts
 * queued (`FANOUT_TRACE=timeline FANOUT_TIMELINE_FILE=tl.json`), at the times they were queued,
 * through the real Outbox (SQLite in memory) and Telegram's limits table to a simulated platform
 * whose calls all take `--latency` ms. Time to final and the ideal (bench/fanout-ideal.ts) are
 * then free of the machine's load, so a change of the pacer can be compared on the same traffic.
 * An end notice is queued no earlier than the answer to its run's last status edit in its chat
 * (the notifier waits for it); every other call keeps its recorded time.
 *
 * The recorded interactive calls (the press loops' private chats) are played too: how long each
 * waited from being queued to its answer (`interactive_ms`; the press's edit: `press_to_edit_ms`)
 * shows what a pacing rule costs a person beside the fan-out. `over_limit` counts the calls the
 * platform would have answered 429 (bot-wide 30 in any second, at arrival: half the round trip
 * after the start; per chat, 1 a second with Telegram's burst of 2).
 *
 * Run: npx tsx bench/fanout-replay.ts tl.json [--latency 5] [--held 2] [--status-burst N] [--at-once N]
 */
import fs from 'node:fs';
import type { Urgency } from '../src/bridges/messages.ts';
import { TELEGRAM_LIMITS } from '../src/bridges/outbox/limits.ts';
import { Outbox } from '../src/bridges/outbox/outbox.ts';
import { OutboxStore } from '../src/bridges/outbox/store.ts';
import { plain } from '../src/bridges/render-text.ts';
import { migrateToLatest, openBridgeDb } from '../src/db/connection.ts';
import { SimClock, SimPlatform } from '../test/bridges/outbox/sim.ts';
import { idealFinish, idealWithOthers, type Necessary } from './fanout-ideal.ts';
import type { Queued } from './fanout-trace.ts';

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : fallback;
};
const LATENCY = Number(arg('latency', '5'));
const HELD = arg('held', '');
const SB = arg('status-burst', '');
/** The bot row's `spread.atOnce` (0: no spread). */
const AT_ONCE = arg('at-once', '');
const LIMITS = {
  perChat: { max: 1, windowMs: 1000 },
  perGroup: { max: 20, windowMs: 60_000 },
  overall: { max: 30, windowMs: 1000 },
};

const recorded = JSON.parse(fs.readFileSync(process.argv[2]!, 'utf8')) as {
  queued: Queued[];
  necessary: Necessary[];
};
const table = {
  ...TELEGRAM_LIMITS,
  limits: TELEGRAM_LIMITS.limits.map((l) =>
    l.scope === 'bot'
      ? {
          ...l,
          ...(HELD === '' ? {} : { held: Number(HELD) }),
          ...(AT_ONCE === ''
            ? {}
            : {
                spread:
                  Number(AT_ONCE) > 0 ? { atOnce: Number(AT_ONCE), whileMs: 30_000 } : undefined,
              }),
        }
      : l.scope === 'group' && SB !== ''
        ? { ...l, statusBurst: Number(SB) }
        : l,
  ),
};
const db = openBridgeDb({ file: ':memory:' });
await migrateToLatest(db);
const clock = new SimClock();
const platform = new SimPlatform('telegram', clock, () => LATENCY);
const outbox = new Outbox({
  store: OutboxStore.on(db.sqlite, () => clock.now()),
  inner: platform,
  limits: table,
  timers: clock,
});
outbox.start();

const simRef = new Map<string, Promise<string>>();
/** The last edit queued of each recorded message (the notice of its run waits for it). */
const lastEdit = new Map<string, Promise<unknown>>();
/** The recorded status message of each run in each chat. */
const statusOf = new Map<string, string>();
const runOf = (text: string) => /fanout-\d+/.exec(text)?.[0] ?? '';
const fanLanes = new Set<string>();
/** Queued → answered (simulated ms) of each interactive call; the press's edits apart. */
const interactiveMs: number[] = [];
const pressMs: number[] = [];
const timed = <T>(urgency: string | undefined, kind: string, p: Promise<T>): Promise<T> => {
  if (urgency !== 'interactive') return p;
  const from = clock.now();
  return p.then((v) => {
    interactiveMs.push(clock.now() - from);
    if (kind === 'edit') pressMs.push(clock.now() - from);
    return v;
  });
};
const ops = [...recorded.queued].sort((a, b) => a.at - b.at);
for (const op of ops) {
  await clock.runUntil(op.at);
  const lane = op.target.split('/')[0]!;
  const message = { text: [plain(op.text)], urgency: op.urgency as Urgency | undefined };
  if (lane.startsWith('telegram:-')) fanLanes.add(lane);
  if (op.kind === 'send') {
    const notice = op.text.startsWith('🏁');
    if (!notice && op.ref) statusOf.set(`${lane}|${runOf(op.text)}`, op.ref);
    const before = notice
      ? lastEdit.get(statusOf.get(`${lane}|${runOf(op.text)}`) ?? '')
      : undefined;
    const sent = (async () => {
      await before?.catch(() => undefined);
      return (await timed(op.urgency, 'send', outbox.enqueue('send', op.target, message)))!;
    })();
    if (op.ref) simRef.set(op.ref, sent);
    continue;
  }
  const target = simRef.get(op.target);
  if (!target) continue;
  lastEdit.set(
    op.target,
    target.then((ref) => timed(op.urgency, 'edit', outbox.enqueue('edit', ref, message))),
  );
}
await clock.runAll();
await outbox.drained();
const fan = platform.calls.filter((c) => fanLanes.has(c.target.split('/')[0]!));
// The platform counts a call when it receives it: half the round trip after its start.
const finalAt = Math.max(...fan.map((c) => c.startedAt + LATENCY / 2));
// The other chats' calls where the replay put them (arrival: half the round trip after the start).
const others = platform.calls
  .filter((c) => !fanLanes.has(c.target.split('/')[0]!))
  .map((c) => c.startedAt + LATENCY / 2);
const alone = idealFinish(recorded.necessary, LIMITS);
const ideal = idealWithOthers(recorded.necessary, LIMITS, others);
const dump = arg('dump', '');
if (dump) {
  const calls = platform.calls.map((c) => ({
    lane: c.target.split('/')[0],
    kind: c.kind,
    target: c.target,
    urgency: c.urgency,
    start: c.startedAt,
    answer: c.finishedAt,
  }));
  fs.writeFileSync(dump, JSON.stringify({ calls, necessary: recorded.necessary }));
}
/** Calls past the platform's limits (each would have been a 429), at their arrival. */
function overLimit(): number {
  const arrivals = platform.calls.map((c) => ({
    lane: c.target.split('/')[0]!,
    at: c.startedAt + LATENCY / 2,
  }));
  arrivals.sort((a, b) => a.at - b.at);
  let over = 0;
  const byLane = new Map<string, number[]>();
  for (let i = 0; i < arrivals.length; i++) {
    const { lane, at } = arrivals[i]!;
    // Bot-wide: 30 in (at - 1000, at].
    let n = 0;
    for (let j = i; j >= 0 && arrivals[j]!.at > at - 1000; j--) n++;
    // Per chat: a token bucket of 3 refilled 1 a second (the fake's rule).
    const mine = byLane.get(lane) ?? [];
    mine.push(at);
    byLane.set(lane, mine);
    let level = 3;
    let last = Number.NEGATIVE_INFINITY;
    for (const t of mine) {
      level = Math.min(3, level + (t - last) / 1000) - 1;
      last = t;
    }
    if (n > 30 || level < -1e-9) over++;
  }
  return over;
}
const pct = (ms: number[]) => {
  const s = [...ms].sort((a, b) => a - b);
  return {
    n: s.length,
    p50: Math.round(s[Math.floor(s.length / 2)] ?? 0),
    max: Math.round(s.at(-1) ?? 0),
  };
};
console.log(
  JSON.stringify({
    latency_ms: LATENCY,
    held: HELD === '' ? 'table' : Number(HELD),
    status_burst: SB === '' ? 'table' : Number(SB),
    at_once: AT_ONCE === '' ? 'table' : Number(AT_ONCE),
    calls: fan.length,
    time_to_final_ms: Math.round(finalAt),
    ideal_ms: Math.round(ideal),
    ratio_to_ideal: +(finalAt / ideal).toFixed(3),
    ratio_to_fanout_alone_ideal: +(finalAt / alone).toFixed(3),
    over_limit: overLimit(),
    interactive_ms: pct(interactiveMs),
    press_to_edit_ms: pct(pressMs),
  }),
);
await db.close();
