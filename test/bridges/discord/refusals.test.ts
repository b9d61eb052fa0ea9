/**
 * Discord channels that refuse the bot, from the fake's permission state (no injected error),
 * through real discord.js: a lost View Channel is Missing Access (50001), a lost Send Messages
 * is Missing Permissions (50013), an archived thread is 50083; each reaches phasebridge as a
 * ChatUnreachableError with our reason, a thread one scoped to the thread; the fake's own
 * REST protocol for it is checked with plain fetch.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { rich } from '../../../src/bridges/render-text.ts';
import { ChatUnreachableError } from '../../../src/errors.ts';
import { type Harness, startHarness } from './support.ts';

let h: Harness;

beforeEach(async () => {
  h = await startHarness();
});

afterEach(async () => {
  await h.close();
});

describe('the fake Discord permission model (plain fetch)', () => {
  const post = (channelId: string) =>
    fetch(`${h.fake.apiUrl}/v10/channels/${channelId}/messages`, {
      method: 'POST',
      headers: { authorization: `Bot ${h.fake.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ content: 'hi' }),
    }).then(async (r) => ({ status: r.status, body: (await r.json()) as { code?: number } }));

  it('answers 403 50001, 403 50013 and 400 50083 from its state, and 200 once allowed', async () => {
    const { text, thread } = h.fake.state;
    h.fake.state.access.deny(text.id, 'SEND_MESSAGES');
    expect(await post(text.id)).toMatchObject({ status: 403, body: { code: 50013 } });
    h.fake.state.access.deny(text.id, 'VIEW_CHANNEL');
    expect(await post(text.id)).toMatchObject({ status: 403, body: { code: 50001 } });
    // A thread inherits its channel's overwrites.
    expect(await post(thread.id)).toMatchObject({ status: 403, body: { code: 50001 } });
    h.fake.state.access.allow(text.id, 'VIEW_CHANNEL');
    h.fake.state.access.allow(text.id, 'SEND_MESSAGES');
    h.fake.state.access.archiveThread(thread.id);
    expect(await post(thread.id)).toMatchObject({ status: 400, body: { code: 50083 } });
    expect((await post(text.id)).status).toBe(200);
  });
});

describe('DiscordChannel in a channel that refuses the bot', () => {
  it('a lost View Channel is CHAT_UNREACHABLE missing_access', async () => {
    h.fake.state.access.deny(h.fake.state.text.id, 'VIEW_CHANNEL');
    const err = await h.channel.send(h.chatRef, { text: rich('hi') }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ChatUnreachableError);
    expect(err).toMatchObject({ reason: 'missing_access', scope: 'chat' });
    expect((err as Error).message).toContain('50001');
  });

  it('a lost Send Messages is CHAT_UNREACHABLE missing_permissions, also for an edit', async () => {
    const ref = await h.channel.send(h.chatRef, { text: rich('hi') });
    h.fake.state.access.deny(h.fake.state.text.id, 'SEND_MESSAGES');
    const sent = await h.channel.send(h.chatRef, { text: rich('x') }).catch((e: unknown) => e);
    expect(sent).toMatchObject({ code: 'CHAT_UNREACHABLE', reason: 'missing_permissions' });
    const edited = await h.channel.edit(ref, { text: rich('y') }).catch((e: unknown) => e);
    expect(edited).toMatchObject({ code: 'CHAT_UNREACHABLE', reason: 'missing_permissions' });
  });

  it('an archived thread refuses the thread only (scope thread)', async () => {
    const { thread } = h.fake.state;
    h.fake.state.access.archiveThread(thread.id);
    const err = await h.channel
      .send(`${h.chatRef}:${thread.id}`, { text: rich('hi') })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ reason: 'thread_archived', scope: 'thread' });
    await expect(h.channel.send(h.chatRef, { text: rich('hi') })).resolves.toBeTruthy();
  });
});
