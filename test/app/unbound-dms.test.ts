/**
 * Issue 38 on Slack and Discord, through the whole bridge (real Bolt and discord.js against the
 * fakes): a person who writes to the app in a direct message that is not bound hears back what
 * the bot is and how to pair, at most once a minute (Telegram: test/chatops/unbound-chats).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { DiscordDriver } from '../contracts/drivers/discord.ts';
import { SlackDriver } from '../contracts/drivers/slack.ts';
import { until } from '../contracts/platform-driver.ts';
import { World } from '../contracts/world.ts';
import { holdsFor } from '../support/slowdown.ts';

let w: World | undefined;
afterEach(async () => {
  await w?.cleanup();
  w = undefined;
});

const WHAT = /^I am phasebridge: I run coding-agent workflows/;

describe('an unbound direct message', () => {
  it('Slack: plain text is answered with what the bot is and how to pair, once a minute', async () => {
    const slack = await SlackDriver.start();
    w = await World.create([slack]);
    const DM = 'D0CAROL';
    const said = (): string[] => (slack.fake.messages.get(DM) ?? []).map((m) => m.text ?? '');
    const user = slack.user('carol');
    await slack.fake.sendDirectMessage({ user, channel: DM, text: 'hello' });
    await until(() => said().length > 0, 'an answer in the Slack DM');
    expect(said()[0]).toMatch(WHAT);
    expect(said()[0]).toMatch(/pair/);
    await slack.fake.sendDirectMessage({ user, channel: DM, text: 'anyone?' });
    await holdsFor(() => said().length === 1, 1500, 'a second hint within the minute');
  });

  it('Discord: plain text is answered with what the bot is and how to pair, once a minute', async () => {
    const discord = await DiscordDriver.start();
    w = await World.create([discord]);
    const { state } = discord.fake;
    const carol = state.users.get(discord.userId('carol'))!;
    const dm = state.dm(carol);
    const said = (): string[] =>
      state
        .channelMessages(dm.id)
        .filter((m) => m.author.id !== carol.id)
        // Our messages go as an embed's description (its markdown room), the content empty.
        .map((m) => `${m.content ?? ''}${m.embeds.map((e) => e.description ?? '').join('')}`);
    discord.fake.userMessage(carol, dm, 'hello');
    await until(() => said().length > 0, 'an answer in the Discord DM');
    expect(said()[0]).toMatch(WHAT);
    expect(said()[0]).toMatch(/pair/);
    discord.fake.userMessage(carol, dm, 'anyone?');
    await holdsFor(() => said().length === 1, 1500, 'a second hint within the minute');
  });
});
