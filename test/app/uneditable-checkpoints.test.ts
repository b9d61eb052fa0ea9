/**
 * A checkpoint message the platform will not edit any more, from the fakes' own state (no
 * injected error), through the whole bridge (`startBridge`) and the real SDKs. After the decision
 * the chat still shows who decided, in a new message, once:
 * - Slack, past the workspace's edit window (`cant_update_message`): in the checkpoint's thread;
 *   the old message keeps its buttons, and a press on them is answered "already approved";
 * - Telegram and Discord, the checkpoint message deleted by someone in the chat: in the chat;
 * - Discord, the checkpoint in a thread that was archived (50083): in the thread's channel.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { DiscordDriver, discordText, slashOptions } from '../contracts/drivers/discord.ts';
import { OPS, SlackDriver, slackText } from '../contracts/drivers/slack.ts';
import { TEAM, TelegramDriver } from '../contracts/drivers/telegram.ts';
import {
  checkpointButtonsOn,
  type PlatformDriver,
  until,
  waitFor,
} from '../contracts/platform-driver.ts';
import { runIdOf, World } from '../contracts/world.ts';

let w: World | undefined;

afterEach(async () => {
  await w?.cleanup();
  w = undefined;
});

async function world(d: PlatformDriver): Promise<World> {
  w = await World.create([d]);
  return w;
}

const DECIDED = /Checkpoint plan:1[\s\S]*Approved by /;

describe('a checkpoint message that can no longer be edited', () => {
  it('Slack, past the edit window: the decision is posted in its thread; its buttons answer "already approved"', async () => {
    const slack = await SlackDriver.start();
    const w = await world(slack);
    slack.fake.api.editWindowMs = 60_000;
    await slack.sendCommand('alice', 'run demo add login');
    const plan = await w.message(slack, /Checkpoint plan:1/);
    const runId = runIdOf(plan);

    slack.fake.clock.advance(61_000);
    await slack.press('bob', plan, 'Approve');
    const inThread = () => slack.repliesTo(plan).filter((m) => DECIDED.test(m.text));
    const decision = await waitFor(() => inThread()[0], 'the decision in the checkpoint thread');
    expect(decision.text).toContain('Approved by @bob at ');
    expect(decision.text).toContain(`run ${runId}`);
    expect(decision.buttons).toEqual([]);
    const refused = slack.fake.calls.filter(
      (c) => c.method === 'chat.update' && c.error === 'cant_update_message',
    );
    expect(refused.length).toBeGreaterThanOrEqual(1);
    // Slack kept the old message as it was: buttons and all.
    expect(w.current(slack, plan)!.buttons).toEqual(checkpointButtonsOn(slack));
    await w.message(slack, /Checkpoint review:1/);

    const late = await slack.press('dave', plan, 'Reject');
    expect(await slack.answerTo(late)).toMatch(/^Checkpoint plan:1 already approved by @?bob$/);
    const state = await w.bridge.orchestrator.getRun(runId);
    expect(state.checkpoints.find((c) => c.id === 'plan:1')?.decision?.answer).toBe('approve');
    expect(inThread()).toHaveLength(1);
    // Nothing was posted in the channel itself for it.
    const top = (slack.fake.messages.get(OPS) ?? []).filter((m) => m.threadTs === undefined);
    expect(top.filter((m) => DECIDED.test(slackText(m)))).toEqual([]);
  });

  it('Telegram, the message deleted in the chat: the decision is posted in the chat once', async () => {
    const telegram = await TelegramDriver.start();
    const w = await world(telegram);
    await telegram.sendCommand('alice', 'run demo add login');
    const plan = await w.message(telegram, /Checkpoint plan:1/);
    const runId = runIdOf(plan);
    // An admin deletes the checkpoint message; the decision is made elsewhere (the CLI).
    telegram.fake.store.message(TEAM.id, Number(plan.id))!.deleted = true;
    await w.approveOutside(runId, 'plan:1', 'erin');

    const decision = await w.message(telegram, DECIDED);
    expect(decision.text).toContain('Approved by erin at ');
    expect(decision.buttons).toEqual([]);
    const edits = telegram.fake.calls.filter(
      (c) => c.method === 'editMessageText' && Number(c.params.message_id) === Number(plan.id),
    );
    expect(edits.length).toBeGreaterThanOrEqual(1);
    expect(edits.every((c) => !c.ok)).toBe(true);
    await w.message(telegram, /Checkpoint review:1/);
    expect(w.messages(telegram, DECIDED)).toHaveLength(1);
  });

  it('Discord, the message deleted in the channel: the decision is posted in the channel once', async () => {
    const discord = await DiscordDriver.start();
    const w = await world(discord);
    await discord.sendCommand('alice', 'run demo add login');
    const plan = await w.message(discord, /Checkpoint plan:1/);
    const runId = runIdOf(plan);
    discord.fake.state.messages.delete(plan.id);
    await w.approveOutside(runId, 'plan:1', 'erin');

    const decision = await w.message(discord, DECIDED);
    expect(decision.text).toContain('Approved by erin at ');
    expect(decision.buttons).toEqual([]);
    await w.message(discord, /Checkpoint review:1/);
    expect(w.messages(discord, DECIDED)).toHaveLength(1);
  });

  it('Discord, the checkpoint in a thread since archived: the decision is posted in its channel', async () => {
    const discord = await DiscordDriver.start();
    const w = await world(discord);
    const { state } = discord.fake;
    // The thread is the run's only chat: its channel is not bound.
    const { repos } = w.bridge;
    const thread = await repos.bindings.bind({
      chatRef: discord.chatRef,
      thread: state.thread.id,
      workspace: w.workspace,
    });
    await repos.bindings.remove(discord.chatRef, null);
    await repos.allowlist.allow(
      { bindingId: thread.id },
      'discord',
      discord.userId('alice'),
      'operator',
    );
    const alice = state.users.get(discord.userId('alice'))!;
    const { name, options } = slashOptions('run demo add login');
    discord.fake.slashCommand(alice, state.thread, name, options);
    const inThread = (match: RegExp) => () =>
      state
        .channelMessages(state.thread.id)
        .find((m) => m.author.id === state.bot.id && match.test(discordText(m)));
    const plan = await waitFor(inThread(/Checkpoint plan:1/), 'the checkpoint in the thread');
    const runId = runIdOf({ id: plan.id, text: discordText(plan), buttons: [], edited: false });

    state.access.archiveThread(state.thread.id);
    await w.approveOutside(runId, 'plan:1', 'erin');
    const decision = await w.message(discord, DECIDED);
    expect(decision.text).toContain('Approved by erin at ');
    expect(decision.buttons).toEqual([]);
    expect(w.messages(discord, DECIDED)).toHaveLength(1);
    // The thread's copy kept its buttons; the thread is not marked unreachable.
    expect(state.messages.get(plan.id)!.components.length).toBeGreaterThan(0);
    await until(
      async () => (await w.bridge.orchestrator.getRun(runId)).checkpoint?.id === 'review:1',
      'the run to move on',
    );
    expect(await repos.unreachable.list()).toEqual([]);
  });
});
