/**
 * Which chat goes first when a bot-wide limit cannot serve every chat at once (a run's end
 * fanned out to 30 Telegram groups, 28 bot-wide slots a second for them): the real Outbox, its
 * SQLite rows and a simulated platform on a simulated clock, with a bot-wide limit of one call a
 * second so that every slot is contended.
 */
import { describe, expect, it } from 'vitest';
import type { Urgency } from '../../../src/bridges/messages.ts';
import type { PlatformLimits } from '../../../src/bridges/outbox/limits.ts';
import { plain } from '../../../src/bridges/render-text.ts';
import { SimClock, SimPlatform, simOutbox } from './sim.ts';

/** One call a second bot-wide, one a second per chat: two chats always contend for the slot. */
const ONE_SLOT: PlatformLimits = {
  platform: 'telegram',
  limits: [
    { scope: 'bot', max: 1, windowMs: 1000, reserve: 0, source: 'test' },
    { scope: 'chat', max: 1, windowMs: 1000, reserve: 0, source: 'test' },
  ],
};

async function world() {
  const clock = new SimClock();
  const platform = new SimPlatform('telegram', clock, () => 5);
  // Each test closes its db itself.
  const { db, outbox } = await simOutbox(platform, clock, ONE_SLOT, []);
  const say = (text: string, urgency: Urgency) => ({ text: [plain(text)], urgency });
  const texts = () => platform.calls.map((c) => c.text);
  return { db, clock, platform, outbox, say, texts };
}

describe('the outbox’s order across chats at a bot-wide limit', () => {
  it('a run’s end reaches the chats in the order it was queued, not in the order of their older progress edits', async () => {
    const { db, clock, outbox, say, texts } = await world();
    // Another chat's call holds the bot-wide slot for a second.
    void outbox.enqueue('send', 'telegram:-1003', say('elsewhere', 'notice'));
    await clock.runUntil(10);
    // A progress edit of A's status message waits for the slot.
    void outbox.enqueue('edit', 'telegram:-1001/7', say('A working', 'status'));
    await clock.runUntil(20);
    // The run B follows ends, then the run A follows: A's final state takes over the waiting
    // progress edit's row, queued before B's final state.
    void outbox.enqueue('edit', 'telegram:-1002/8', say('B completed', 'notice'));
    await clock.runUntil(30);
    void outbox.enqueue('edit', 'telegram:-1001/7', say('A completed', 'notice'));
    await clock.runAll();
    // Before, A's final state went first on its progress row's older place: in a fan-out to 30
    // groups, the groups whose progress edit had just gone out waited behind every other
    // group's final states, round after round.
    expect(texts()).toEqual(['elsewhere', 'B completed', 'A completed']);
    await db.close();
  });

  it('chats take turns for the bot-wide slot: one chat’s backlog does not hold another’s calls until it is done', async () => {
    const { db, clock, outbox, say, texts } = await world();
    for (const n of [1, 2, 3])
      void outbox.enqueue('send', 'telegram:-1001', say(`A${n}`, 'notice'));
    for (const n of [1, 2, 3])
      void outbox.enqueue('send', 'telegram:-1002', say(`B${n}`, 'notice'));
    await clock.runAll();
    // Before, the oldest row went first whatever its chat: A1 A2 A3 B1 B2 B3, so in a fan-out
    // the same groups (the last queued) waited their turn in every round.
    expect(texts()).toEqual(['A1', 'B1', 'A2', 'B2', 'A3', 'B3']);
    await db.close();
  });
});
