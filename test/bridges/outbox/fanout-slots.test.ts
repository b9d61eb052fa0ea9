/**
 * What a fan-out to many Telegram groups needs at its end (issue 31): all of the bot's 30 calls a
 * second (a press beside it takes the next free slot first), and each group's second free when a
 * run ends rather than just taken by a progress edit. The real Outbox, its SQLite rows and
 * Telegram's table, on a simulated clock and platform (every call answered in 20 ms).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Urgency } from '../../../src/bridges/messages.ts';
import { TELEGRAM_LIMITS } from '../../../src/bridges/outbox/index.ts';
import { plain } from '../../../src/bridges/render-text.ts';
import type { BridgeDb } from '../../../src/db/connection.ts';
import { SimClock, SimPlatform, simOutbox } from './sim.ts';

const PRIVATE = 'telegram:501';
const GROUP = 'telegram:-1009';
const LATENCY = 20;
const say = (label: string, urgency: Urgency) => ({ text: [plain(label)], urgency });

const open: BridgeDb[] = [];
afterEach(async () => {
  for (const db of open.splice(0)) await db.close();
});

async function world() {
  const clock = new SimClock();
  const platform = new SimPlatform('telegram', clock, () => LATENCY);
  const { outbox } = await simOutbox(platform, clock, TELEGRAM_LIMITS, open);
  const startOf = (label: string) => platform.calls.find((c) => c.text === label)?.startedAt;
  /** A run's end to `groups` groups: each group's final state, as the notifier queues it. */
  const fanOut = (groups: number, tag: string) => {
    for (let g = 0; g < groups; g++)
      void outbox.enqueue('send', `telegram:-100${g}`, say(`${tag}${g}`, 'notice'));
  };
  return { clock, platform, outbox, startOf, fanOut };
}

describe('a fan-out and a person’s calls sharing the bot’s 30 a second', () => {
  it('the fan-out gets all 30 slots of its first second, not 28', async () => {
    const { clock, platform, fanOut } = await world();
    fanOut(90, 'g');
    await clock.runAll();
    const starts = platform.calls.map((c) => c.startedAt);
    // The first slot frees when the first call's window ends (answered at 20, counted a second
    // after). Before, 2 of the 30 were held for interactive calls nobody made: 28 went first.
    const firstWindow = starts.filter((t) => t < LATENCY + 1000).length;
    expect(firstWindow).toBe(30);
    // And every later second as well: 90 calls need three windows of 30, not four of 28.
    expect(Math.max(...starts)).toBeLessThan(3 * (1000 + LATENCY));
  });

  it('a press while the fan-out fills every slot takes the next one, before the fan-out’s calls', async () => {
    const { clock, platform, outbox, startOf, fanOut } = await world();
    fanOut(150, 'g');
    await clock.runUntil(1500);
    const pressed = outbox.enqueue('send', PRIVATE, say('press', 'interactive'));
    await clock.runUntil(3000);
    await pressed;
    const after = platform.calls.filter((c) => c.startedAt >= 1500);
    // No slot is held for it: it takes the window's next free one (the fan-out's second round
    // was answered at 1040), before any of the fan-out's calls waiting since 0.
    expect(after[0]!.text).toBe('press');
    expect(startOf('press')).toBeLessThanOrEqual(2 * (1000 + LATENCY));
    await clock.runAll();
    expect(startOf('g149')).toBeDefined();
  });

  it('while a person is at it, the fan-out starts spread over the second: their calls wait a few slots, not the window', async () => {
    const { clock, outbox, startOf, fanOut } = await world();
    // A person's call: from now on the bot's other calls start a few at a time.
    const first = outbox.enqueue('send', PRIVATE, say('reply', 'interactive'));
    await clock.runUntil(50);
    await first;
    fanOut(150, 'g');
    // Presses spread over the fan-out's seconds, while its calls fill every slot; each in its own
    // private chat, so only the bot-wide slots are contended.
    const pressedAt = [700, 1333, 1790, 2450, 3120, 3901];
    for (const at of pressedAt) {
      await clock.runUntil(at);
      void outbox.enqueue('send', `telegram:${at}`, say(`press ${at}`, 'interactive'));
    }
    await clock.runAll();
    const waits = pressedAt.map((at) => startOf(`press ${at}`)! - at);
    const bot = TELEGRAM_LIMITS.limits.find((l) => l.scope === 'bot')!;
    const slot = bot.windowMs / bot.max;
    // Filled at once, the window would free nothing for a second: a press waited up to that.
    // Spread, a slot frees every `slot` ms past the few started at once (counted from answers).
    for (const wait of waits)
      expect(wait).toBeLessThanOrEqual((bot.spread!.atOnce + 1) * slot + LATENCY);
    expect(startOf('g149')).toBeDefined();
  });
});

describe('a group’s progress edits', () => {
  it('come spread over the group’s minute, so a run’s end shows at once, not a second later', async () => {
    const { clock, platform, outbox, startOf } = await world();
    const ref = await (async () => {
      const sent = outbox.enqueue('send', GROUP, say('run started', 'notice'));
      await clock.runUntil(100);
      return (await sent)!;
    })();
    // The agent's progress, every 300 ms; each edit replaces the one still waiting.
    for (let t = 300; t < 9300; t += 300) {
      await clock.runUntil(t);
      void outbox.enqueue('edit', ref, say(`working ${t}`, 'status'));
    }
    await clock.runUntil(9300);
    const ended = outbox.enqueue('edit', ref, say('completed', 'notice'));
    await clock.runUntil(12_000);
    await ended;
    // Before, progress edits took the group's second as soon as it was free (at 9180 the
    // ninth), and the final state waited for the next one (10200).
    expect(startOf('completed')).toBe(9300);
    const progress = platform.calls.filter((c) => c.text.startsWith('working'));
    // Progress still shows: three at the chat's pace, then one a token is back (10 a minute,
    // what the group's reserve leaves them: one every 6 s).
    expect(progress.map((c) => c.startedAt)).toEqual([1020, 2040, 3060, 7041]);
    await clock.runAll();
  });
});
