/**
 * One run followed from two platforms: a Slack channel and a Telegram chat bound to the same
 * workspace by one bridge. The run started on one shows its status and checkpoint on both; an
 * answer on one edits the checkpoint message on both (decision, who, no buttons); the decider is
 * a mention in their own platform's chat and their name in the other's.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { OPS, SlackDriver } from './drivers/slack.ts';
import { TelegramDriver } from './drivers/telegram.ts';
import { checkpointButtonsOn, type PlatformDriver, type SeenMessage } from './platform-driver.ts';
import { runIdOf, World } from './world.ts';

let slack: SlackDriver;
let telegram: TelegramDriver;
let w: World;

beforeEach(async () => {
  slack = await SlackDriver.start();
  telegram = await TelegramDriver.start();
  w = await World.create([slack, telegram]);
});
afterEach(async () => {
  await w.cleanup();
});

/** The checkpoint message on each platform, for the same run. */
async function checkpointOnBoth(runId?: string): Promise<Map<PlatformDriver, SeenMessage>> {
  const copies = new Map<PlatformDriver, SeenMessage>();
  for (const d of [slack, telegram]) {
    const cp = await w.message(d, /Checkpoint plan:1/);
    expect(cp.buttons).toEqual(checkpointButtonsOn(d));
    if (runId !== undefined) expect(runIdOf(cp)).toBe(runId);
    copies.set(d, cp);
  }
  return copies;
}

describe('one run followed from Slack and Telegram', () => {
  it('started on Slack, approved on Telegram: both checkpoint messages show the decision', async () => {
    await slack.sendCommand('alice', 'run demo add login');
    const status = await w.message(slack, /^Run \S+ · Demo/);
    const runId = runIdOf(status);
    expect(runIdOf(await w.message(telegram, /^Run \S+ · Demo/))).toBe(runId);
    const copies = await checkpointOnBoth(runId);

    const approve = await telegram.press('bob', copies.get(telegram)!, 'Approve');
    expect(await telegram.answerTo(approve)).toBe('Approved — 1 of 1 approval; the run moves on');
    for (const [d, cp] of copies) {
      const decided = await w.settles(d, cp, (m) => m.buttons.length === 0, 'the decision');
      expect(decided.text).toMatch(/✅ Checkpoint plan:1 — run \S+\nApproved by @bob at /);
    }
    const state = await w.bridge.orchestrator.getRun(runId);
    expect(state.checkpoints[0]!.decision!.by.map((a) => a.id)).toEqual([
      `telegram:${telegram.userId('bob')}`,
    ]);
    // The run moves on: its next checkpoint reaches both chats.
    await w.message(slack, /Checkpoint review:1/);
    await w.message(telegram, /Checkpoint review:1/);
  });

  it('started on Telegram, rejected on Slack with a reason: both copies show it', async () => {
    await telegram.sendCommand('alice', 'run demo add login');
    const copies = await checkpointOnBoth();
    const runId = runIdOf(copies.get(telegram)!);

    const reject = await slack.press('bob', copies.get(slack)!, 'Reject');
    await slack.replyReason(reject, 'needs tests first');
    for (const [d, cp] of copies) {
      const decided = await w.settles(d, cp, (m) => m.buttons.length === 0, 'the decision');
      expect(decided.text).toMatch(/❌ Checkpoint plan:1 — run \S+\nRejected by @bob at /);
      expect(decided.text).toContain('Reason given: needs tests first');
      await w.message(d, /❌ Run \S+ Failed: rejected by @bob: needs tests first/);
      // Issue 29: in Slack's own chat the decider is a Slack mention (the client shows the name);
      // Telegram, another platform, names them.
      if (d === telegram) expect(decided.text).not.toContain('<@');
    }
    const raw = JSON.stringify(slack.fake.message(OPS, copies.get(slack)!.id)?.blocks);
    expect(raw).toContain(`Rejected by <@${slack.userId('bob')}> at`);
    const state = await w.bridge.orchestrator.getRun(runId);
    expect(state.checkpoints[0]!.votes.map((v) => v.actor.id)).toEqual([
      `slack:${slack.userId('bob')}`,
    ]);
  });
});
