/**
 * A Discord press the bridge answers too late for the interaction, from the fake's own clock
 * (more than 3 s after the press: 10062 Unknown interaction). The whole bridge (`startBridge`)
 * and discord.js against the fake: what the presser should see still reaches the channel (the
 * answer to the press, the reason prompt with its button), the checkpoint message shows the
 * decision, and the run moves on.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DiscordDriver, discordText } from '../contracts/drivers/discord.ts';
import { until } from '../contracts/platform-driver.ts';
import { runIdOf, World } from '../contracts/world.ts';
import type { FakeInteraction, StoredMessage } from '../fakes/discord.ts';

let discord: DiscordDriver;
let w: World;

beforeEach(async () => {
  discord = await DiscordDriver.start();
  w = await World.create([discord]);
});
afterEach(async () => {
  await w.cleanup();
});

/** A bot message everyone in the channel sees that mentions `who` (with buttons: `withButton`). */
async function mentioning(who: string, match: RegExp, withButton = false): Promise<StoredMessage> {
  const { state } = discord.fake;
  let found: StoredMessage | undefined;
  await until(() => {
    found = state
      .channelMessages(state.text.id)
      .find(
        (m) =>
          m.content.startsWith(`<@${who}> `) &&
          match.test(discordText(m)) &&
          (!withButton || m.components.length > 0),
      );
    return found !== undefined;
  }, `a channel message to ${who} matching ${match}`);
  return found!;
}

/** The interaction callbacks Discord refused as too late. */
const lateCallbacks = () =>
  discord.fake.calls.filter((c) => /\/callback$/.test(c.path) && c.status === 404);

describe('a Discord press answered after its 3 s', () => {
  it('the answer is posted in the channel for the presser, the checkpoint shows the decision, the run moves on', async () => {
    await discord.sendCommand('alice', 'run demo add login');
    const plan = await w.message(discord, /Checkpoint plan:1/);
    const runId = runIdOf(plan);
    const bob = discord.userId('bob');

    await discord.press('bob', plan, 'Approve');
    // The bridge is slow to answer (a busy host): the press is older than 3 s when it does.
    discord.fake.advanceClock(5000);

    await mentioning(bob, /approv/i);
    const decided = await w.settles(discord, plan, (m) => m.buttons.length === 0, 'decided');
    expect(decided.text).toMatch(/Approved by/);
    await w.runState(
      runId,
      (s) => s.checkpoints.find((c) => c.stepId === 'plan')?.decision?.answer === 'approve',
      'plan approved',
    );
    expect(lateCallbacks().length).toBeGreaterThan(0);
  });

  it('Request changes: the reason prompt and its button come in the channel; the modal it opens takes the reason', async () => {
    await discord.sendCommand('alice', 'run demo add login');
    const plan = await w.message(discord, /Checkpoint plan:1/);
    const runId = runIdOf(plan);
    const bob = discord.userId('bob');

    const press = await discord.press('bob', plan, 'Request changes');
    discord.fake.advanceClock(5000);

    // What the modal would have said: the answer to the press, then the question with its button.
    await mentioning(bob, /Reply to the prompt below with what should change/);
    const offer = await mentioning(bob, /./, true);
    const rows = offer.components as { components: { custom_id: string }[] }[];
    // The fake makes a new user per call: Bob is the one the driver presses as.
    const bobUser = (press.handle as FakeInteraction).user;
    const open = discord.fake.pressButton(bobUser, offer.id, rows[0]!.components[0]!.custom_id);
    await discord.fake.waitFor(() => open.modal, 'the reason modal');
    discord.fake.submitModal(bobUser, open, {
      reason: 'needs tests for the login form',
    });

    await w.message(discord, /Checkpoint plan:2/);
    const state = await w.bridge.orchestrator.getRun(runId);
    expect(state.feedback?.map((f) => [f.kind, f.text])).toEqual([
      ['changes', 'needs tests for the login form'],
    ]);
    expect(lateCallbacks().length).toBeGreaterThan(0);
  });
});
