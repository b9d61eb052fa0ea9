/**
 * Replies as guidance on Slack and Discord through the whole bridge (real Bolt and discord.js
 * against the fakes): an operator's thread reply (Slack) or reply and thread message (Discord)
 * under a run's checkpoint or status message reaches the next attempt, is acknowledged where it
 * was written, is in the ledger with its author and in `status`; a redelivery is applied once;
 * bots, edits, plain messages and replies under other messages are ignored; a viewer is refused
 * privately (Slack ephemeral, Discord DM, a ping in the chat when their DMs are closed).
 */
import fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { runCliAsync } from '../cli/support.ts';
import { wireUser } from '../fakes/discord-wire.ts';
import { DiscordDriver, plainMarkdown } from './drivers/discord.ts';
import { OPS, plainMrkdwn, SlackDriver } from './drivers/slack.ts';
import { until } from './platform-driver.ts';
import { runIdOf, World } from './world.ts';

let w: World | undefined;
afterEach(async () => {
  await w?.cleanup();
  w = undefined;
});

/** The run's feedback as [kind, author id, text]. */
async function feedbackOf(world: World, runId: string): Promise<string[][]> {
  const state = await world.bridge.orchestrator.getRun(runId);
  return (state.feedback ?? []).map((f) => [f.kind, f.by.id, f.text]);
}

/** The last part of a stored message ref: the platform's id of the message. */
const idOf = (ref: string | null): string => String(ref?.split('/').at(-1)?.split(',')[0]);

describe('Slack thread replies as guidance', () => {
  it('an operator’s thread reply reaches the next attempt once, acknowledged in the thread; others are ignored or refused privately', async () => {
    const d = await SlackDriver.start();
    w = await World.create([d]);
    const world = w;
    await d.sendCommand('alice', 'run demo add login');
    const cp = await world.message(d, /Checkpoint plan:1/);
    const runId = runIdOf(cp);
    const inThread = (ts: string) =>
      (d.fake.messages.get(OPS) ?? []).filter((m) => m.threadTs === ts).map((m) => m.text);

    // Bob's reply under the checkpoint, delivered twice (Slack's retry): noted once, in the thread.
    const first = await d.fake.sendThreadReply({
      user: d.user('bob'),
      channel: OPS,
      threadTs: cp.id,
      text: 'hash passwords with *bcrypt*',
    });
    const acked = (ts: string) => inThread(ts).some((t) => plainMrkdwn(t).startsWith('Noted'));
    await until(() => acked(cp.id), 'the acknowledgement in the thread');
    await d.fake.deliver(first.request, 1);
    expect(inThread(cp.id).map(plainMrkdwn)).toEqual([
      'Noted: goes to build with the approval; it goes to plan, attempt 2 if changes are requested.',
    ]);

    // Alice (an operator) under the status message: the same, in that thread.
    const statusTs = idOf(await world.bridge.repos.statusMessages.get(runId, d.chatRef));
    await d.fake.sendThreadReply({
      user: d.user('alice'),
      channel: OPS,
      threadTs: statusTs,
      text: 'keep the session cookie',
    });
    // The status thread also holds the step's answer: wait for the acknowledgement itself.
    await until(() => acked(statusTs), 'the acknowledgement under the status');
    // The checkpoint's Notes line names them as Slack mentions in Slack (issue 29).
    const notesLine = `2 notes from <@${d.userId('bob')}> and <@${d.userId('alice')}> will go`;
    await until(
      () => JSON.stringify(d.fake.message(OPS, cp.id)?.blocks).includes(notesLine),
      'the Notes line with mentions',
    );

    // Not guidance: a bot, an edit, a mention (a command), a reply under a message of no run.
    const noted = (d.fake.messages.get(OPS) ?? []).find((m) => m.threadTs === cp.id)!;
    const ignored = [
      { threadTs: cp.id, text: 'bot says hi', extra: { bot_id: 'B0OTHER' } },
      { threadTs: cp.id, text: 'edited', extra: { subtype: 'message_changed' } },
      { threadTs: noted.ts, text: 'thanks' },
    ];
    for (const o of ignored) {
      await d.fake.sendThreadReply({ user: d.user('bob'), channel: OPS, ...o });
    }
    // Carol, a viewer: told privately in the thread; the chat sees nothing, nothing is recorded.
    await world.setRole(d, 'carol', 'viewer');
    await d.fake.sendThreadReply({
      user: d.user('carol'),
      channel: OPS,
      threadTs: cp.id,
      text: 'use md5',
    });
    await until(() => d.privateNotices('carol').length > 0, 'the private refusal');
    expect(d.privateNotices('carol')).toEqual([
      `Your reply about run ${runId}: only an operator or above can guide a run here; your reply was not passed on.`,
    ]);
    expect(d.fake.ephemerals.at(-1)).toMatchObject({ user: 'U0CAROL', thread_ts: cp.id });
    const refused = await world.bridge.repos.audit.listRecent({ action: 'reply:guidance' });
    expect(refused.map((a) => a.outcome).sort()).toEqual(['allowed', 'allowed', 'refused']);
    expect(inThread(cp.id)).toHaveLength(1);

    await d.sendCommand('bob', `changes ${runId} add a test for it`);
    await world.message(d, /Checkpoint plan:2/);
    expect(await feedbackOf(world, runId)).toEqual([
      ['guidance', 'slack:U0BOB', 'hash passwords with *bcrypt*'],
      ['guidance', 'slack:U0ALICE', 'keep the session cookie'],
      ['changes', 'slack:U0BOB', 'add a test for it'],
    ]);
    const log = fs.readFileSync(await world.bridge.orchestrator.logPath(runId, 'plan'), 'utf8');
    expect(log).toMatch(/demo-agent: feedback from .+ \(guidance, .+\): hash passwords with/);
    expect(log).toMatch(/\(guidance, .+\): keep the session cookie/);
    expect(log).not.toMatch(/md5|bot says hi|edited|thanks/);
    const status = await runCliAsync(['status', runId], world.home, world.dir);
    // Slack message events carry no name: bob, never seen named yet, is named by users.info;
    // alice, named by her earlier command, is @alice (issue 29).
    expect(status.out).toMatch(
      /feedback from reviewers \(oldest first\)\n {2}plan attempt 2: guidance by @bob, .*: hash passwords with \*bcrypt\*\n {2}plan attempt 2: guidance by @alice, .*: keep the session cookie\n/,
    );
  });
});

describe('Discord replies and thread messages as guidance', () => {
  it('an operator’s reply or thread message reaches the next attempt once; a viewer gets a DM, or a ping when DMs are closed', async () => {
    const d = await DiscordDriver.start();
    w = await World.create([d]);
    const world = w;
    const { fake } = d;
    const person = (who: 'alice' | 'bob' | 'carol') => fake.state.users.get(d.userId(who))!;
    const notes = (channelId: string) =>
      fake.state
        .channelMessages(channelId)
        .filter((m) => m.author.id === fake.state.bot.id)
        .flatMap((m) => m.embeds.map((e) => plainMarkdown(String(e.description ?? ''))))
        .filter((t) => t.startsWith('Noted'));
    await d.sendCommand('alice', 'run demo add login');
    const cp = await world.message(d, /Checkpoint plan:1/);
    const runId = runIdOf(cp);

    // Bob replies to the checkpoint; the gateway replays it: noted once, in the channel.
    const reply = fake.userMessage(person('bob'), fake.state.text, 'hash passwords with bcrypt', {
      replyTo: cp.id,
    });
    await until(() => notes(fake.state.text.id).length > 0, 'the acknowledgement');
    fake.redeliver(reply);

    // Alice writes in the thread started from the status message: noted in the thread.
    const statusId = idOf(await world.bridge.repos.statusMessages.get(runId, d.chatRef));
    const thread = fake.startThread(statusId, 'run');
    fake.userMessage(person('alice'), thread, 'keep the session cookie');
    await until(() => notes(thread.id).length > 0, 'the acknowledgement in the thread');
    // The checkpoint's Notes line names them as Discord mentions in Discord (issue 29).
    const notesLine = `2 notes from <@${d.userId('bob')}> and <@${d.userId('alice')}> will go`;
    await until(
      () => JSON.stringify(fake.state.messages.get(cp.id)?.embeds).includes(notesLine),
      'the Notes line with mentions',
    );

    // Not guidance: a plain channel message, a reply to a message of no run (the answer to
    // whoami; a reply to the acknowledgement is a note, words-stories.ts), another bot.
    await d.sendCommand('bob', 'whoami');
    const other = await world.message(d, /^You are /);
    fake.userMessage(person('bob'), fake.state.text, 'lunch?');
    fake.userMessage(person('bob'), fake.state.text, 'thanks', { replyTo: other.id });
    fake.userMessage(wireUser('42', 'otherbot', true), fake.state.text, 'beep', {
      replyTo: cp.id,
    });

    // Carol, a viewer: a DM; with her DMs closed, a ping to her alone in the chat.
    await world.setRole(d, 'carol', 'viewer');
    fake.userMessage(person('carol'), fake.state.text, 'use md5', { replyTo: cp.id });
    await until(() => d.privateNotices('carol').length > 0, 'the DM');
    expect(d.privateNotices('carol')).toEqual([
      `Your reply about run ${runId}: only an operator or above can guide a run here; your reply was not passed on.`,
    ]);
    fake.state.dmsClosed.add(d.userId('carol'));
    fake.userMessage(person('carol'), fake.state.text, 'use sha1', { replyTo: cp.id });
    const pinged = () =>
      fake
        .okCalls('POST', new RegExp(`^/channels/${fake.state.text.id}/messages$`))
        .find((c) => String(c.body?.content).startsWith(`<@${d.userId('carol')}>`));
    await until(() => pinged() !== undefined, 'the ping in the chat');
    expect(pinged()?.body?.allowed_mentions).toEqual({ users: [d.userId('carol')] });
    expect(d.latestMessages().some((m) => /only an operator/.test(m.text))).toBe(false);
    expect(notes(fake.state.text.id)).toEqual([
      'Noted: goes to build with the approval; it goes to plan, attempt 2 if changes are requested.',
    ]);

    await d.sendCommand('bob', `changes ${runId} add a test for it`);
    await world.message(d, /Checkpoint plan:2/);
    const bob = `discord:${d.userId('bob')}`;
    expect(await feedbackOf(world, runId)).toEqual([
      ['guidance', bob, 'hash passwords with bcrypt'],
      ['guidance', `discord:${d.userId('alice')}`, 'keep the session cookie'],
      ['changes', bob, 'add a test for it'],
    ]);
    const log = fs.readFileSync(await world.bridge.orchestrator.logPath(runId, 'plan'), 'utf8');
    expect(log).toMatch(/demo-agent: feedback from Bob \(guidance, .+\): hash passwords/);
    expect(log).not.toMatch(/md5|sha1|lunch|thanks|beep/);
    const status = await runCliAsync(['status', runId], world.home, world.dir);
    expect(status.out).toContain('plan attempt 2: guidance by Bob, ');
  });

  it('without the Message Content intent the bridge starts, and replies are not taken', async () => {
    const d = await DiscordDriver.start({ messageContent: false });
    w = await World.create([d]);
    const world = w;
    // Discord refuses Message Content to an application without it: the bridge did not ask.
    expect(d.fake.gateway.intents & (1 << 15)).toBe(0);
    await d.sendCommand('alice', 'run demo add login');
    const cp = await world.message(d, /Checkpoint plan:1/);
    const user = d.fake.state.users.get(d.userId('bob'))!;
    d.fake.userMessage(user, d.fake.state.text, 'hash passwords', { replyTo: cp.id });
    await d.sendCommand('bob', `changes ${runIdOf(cp)} add a test`);
    await world.message(d, /Checkpoint plan:2/);
    expect((await feedbackOf(world, runIdOf(cp))).map((f) => f[0])).toEqual(['changes']);
  });
});
