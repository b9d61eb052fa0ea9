/**
 * `console` on Slack and Discord through the whole bridge (real Bolt and discord.js against the
 * fakes): the sign-in link reaches only the presser (a Slack ephemeral; a Discord DM), never the
 * channel, and signs them in; with their Discord DMs closed the channel hears why, without a link.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { DiscordDriver } from '../contracts/drivers/discord.ts';
import { OPS, SlackDriver } from '../contracts/drivers/slack.ts';
import { waitFor } from '../contracts/platform-driver.ts';
import { World } from '../contracts/world.ts';
import { signIn } from '../support/console-login.ts';

const PUBLIC = 'http://localhost:7798';
const TOKEN_LINK = /(http:\/\/\S+\?token=[A-Za-z0-9_%-]+)/;

let w: World | undefined;
afterEach(async () => {
  await w?.cleanup();
  w = undefined;
});

/** Opens a link from chat on the bridge's real port; the session cookie. */
async function signedIn(world: World, link: string): Promise<string> {
  const res = await signIn(link.replace(PUBLIC, world.bridge.url));
  expect(res.status).toBe(303);
  const cookie = (res.headers.get('set-cookie') ?? '').split(';')[0]!;
  expect((await fetch(`${world.bridge.url}/runs`, { headers: { cookie } })).status).toBe(200);
  return cookie;
}

describe('console sign-in links on Slack and Discord', () => {
  it('Slack: an ephemeral message to the presser only', async () => {
    const slack = await SlackDriver.start();
    w = await World.create([slack], { env: { PHASEBRIDGE_PUBLIC_URL: PUBLIC } });
    await slack.sendCommand('bob', 'console');
    const ephemeral = await waitFor(
      () => slack.fake.ephemerals.find((e) => TOKEN_LINK.test(String(e.text ?? ''))),
      'the ephemeral sign-in link',
    );
    expect(ephemeral.user).toBe(slack.userId('bob'));
    expect(ephemeral.channel).toBe(OPS);
    const inChannel = (slack.fake.messages.get(OPS) ?? []).map((m) => m.text).join('\n');
    expect(inChannel).not.toContain('token=');
    await signedIn(w, TOKEN_LINK.exec(String(ephemeral.text))![1]!);
  });

  it('Discord: a DM to the presser; closed DMs are said in the channel, without the link', async () => {
    const discord = await DiscordDriver.start();
    w = await World.create([discord], { env: { PHASEBRIDGE_PUBLIC_URL: PUBLIC } });
    const { state } = discord.fake;
    const bob = state.users.get(discord.userId('bob'))!;
    await discord.sendCommand('bob', 'console');
    const dm = await waitFor(
      () => state.channelMessages(state.dm(bob).id).find((m) => TOKEN_LINK.test(m.content ?? '')),
      'the DM with the sign-in link',
    );
    await signedIn(w, TOKEN_LINK.exec(dm.content!)![1]!);

    state.dmsClosed.add(discord.userId('dave'));
    await discord.sendCommand('dave', 'console');
    const said = await w.message(discord, /could not send you a private message/);
    expect(said.text).not.toContain('token=');
    const channelText = state
      .channelMessages(state.text.id)
      .map((m) => m.content ?? '')
      .join('\n');
    expect(channelText).not.toContain('token=');
  });
});
