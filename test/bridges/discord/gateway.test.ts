/**
 * The Discord channel's connection, against the fake: it becomes ready with the Guilds and
 * GuildMessages intents (and Message Content, which the application allows), registers one slash
 * command per verb, answers heartbeats, and after the gateway drops it
 * resumes the session (op 6) and still receives interactions, including those sent meanwhile.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { DiscordChannel } from '../../../src/bridges/discord/index.ts';
import { hasCode } from '../../../src/errors.ts';
import { FakeDiscord } from '../../fakes/discord.ts';
import { type Harness, startHarness } from './support.ts';

let h: Harness | undefined;
afterEach(async () => {
  const problems = h?.log.lines.filter((l) => l.level === 'warn' || l.level === 'error');
  await h?.close();
  h = undefined;
  expect(problems ?? []).toEqual([]);
});

describe('DiscordChannel connection', () => {
  it('identifies with Guilds, GuildMessages and Message Content and registers the chat verbs as slash commands', async () => {
    // 1 s, not 100 ms: a heartbeat not acknowledged when the next is due is a zombie to
    // discord.js, and a loaded machine can hold this process up for 100 ms.
    h = await startHarness({}, { heartbeatIntervalMs: 1000 });
    const identify = h.fake.gateway.received.find((p) => p.op === 2);
    // Message Content because the application has it enabled (the harness's fake does).
    expect(identify?.d).toMatchObject({ intents: (1 << 0) | (1 << 9) | (1 << 12) | (1 << 15) });
    expect(h.fake.okCalls('GET', /^\/gateway\/bot$/)).toHaveLength(1);

    const put = h.fake.okCalls(
      'PUT',
      new RegExp(`^/applications/${h.fake.state.applicationId}/commands$`),
    );
    expect(put).toHaveLength(1);
    const names = h.fake.state.globalCommands.map((c) => c.name);
    expect(names).toEqual(
      expect.arrayContaining(['run', 'status', 'approve', 'reject', 'allow', 'pair', 'help']),
    );
    const reject = h.fake.state.globalCommands.find((c) => c.name === 'reject')!;
    // Discord wants required options first; `reason` is required, `run` is not.
    expect(
      (reject.options as { name: string; required: boolean }[]).map((o) => [o.name, o.required]),
    ).toEqual([
      ['reason', true],
      ['run', false],
    ]);
    const allow = h.fake.state.globalCommands.find((c) => c.name === 'allow')!;
    expect((allow.options as { name: string; type: number }[]).map((o) => o.type)).toEqual([6, 3]);

    // Heartbeats are sent and acknowledged (op 1 -> op 11): discord.js sends the next one only
    // if the last was acknowledged, else it drops the connection as a zombie and resumes.
    await h.fake.waitFor(
      () => h!.fake.gateway.received.filter((p) => p.op === 1).length >= 2,
      'two heartbeats',
    );
    expect(h.fake.gateway.resumes).toBe(0);
    expect(h.fake.gateway.identifies).toBe(1);
  });

  it('registers commands per guild when guild ids are given', async () => {
    const fake = await FakeDiscord.start({ messageContent: true });
    const guild = fake.state.guildId;
    const channel = new DiscordChannel({
      token: fake.token,
      apiUrl: fake.apiUrl,
      guildIds: [guild],
    });
    try {
      await channel.start(async () => {});
      expect(fake.state.guildCommands.get(guild)?.length).toBeGreaterThan(10);
      expect(fake.okCalls('PUT', /\/commands$/)).toHaveLength(1);
      expect(fake.state.globalCommands).toEqual([]);
    } finally {
      await channel.stop();
      await fake.close();
    }
  });

  it('fails to start with PLATFORM when the token is refused', async () => {
    const fake = await FakeDiscord.start();
    const channel = new DiscordChannel({
      token: 'MTIzNDU2Nzg5MDEyMzQ1Njc4.Gwrong.wrong-token-wrong-token-0000',
      apiUrl: fake.apiUrl,
    });
    try {
      const err = await channel.start(async () => {}).catch((e: unknown) => e);
      expect(hasCode(err, 'PLATFORM')).toBe(true);
      expect(fake.gateway.identifies).toBe(0);
    } finally {
      await channel.stop();
      await fake.close();
    }
  });

  it('resumes after the gateway drops and receives what was sent meanwhile', async () => {
    h = await startHarness();
    const alice = h.fake.state.user('alice');
    h.fake.slashCommand(alice, h.fake.state.text, 'status');
    expect((await h.inbox.next()).kind).toBe('command');

    h.fake.dropGateway();
    // Sent while no client is connected: replayed on RESUME.
    h.fake.slashCommand(alice, h.fake.state.text, 'runs');
    const replayed = await h.inbox.next();
    expect(replayed.kind === 'command' && replayed.name).toBe('runs');

    const resume = h.fake.gateway.received.find((p) => p.op === 6);
    expect(resume?.path).toBe('/resume');
    expect(h.fake.gateway.identifies).toBe(1);
    expect(h.fake.gateway.resumes).toBe(1);

    // And the resumed session keeps delivering.
    h.fake.slashCommand(alice, h.fake.state.text, 'whoami');
    const after = await h.inbox.next();
    expect(after.kind === 'command' && after.name).toBe('whoami');
  });
});
