/**
 * The fake Slack's own protocol for channel membership, spoken to with plain fetch, so tests that
 * rely on it can trust it: the codes Slack answers when the bot was removed, the channel archived
 * or hidden, or the person is not in the channel.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeSlack } from './slack.ts';

let fake: FakeSlack;

beforeEach(async () => {
  fake = await FakeSlack.start();
});

afterEach(async () => {
  await fake.close();
});

const call = async (method: string, body: Record<string, unknown>) => {
  const res = await fetch(`${fake.origin}/api/${method}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json; charset=utf-8',
      authorization: `Bearer ${fake.botToken}`,
    },
    body: JSON.stringify(body),
  });
  return (await res.json()) as { ok: boolean; error?: string; ts?: string };
};

describe('FakeSlack channel membership', () => {
  it('posts anywhere until a channel says otherwise', async () => {
    expect(await call('chat.postMessage', { channel: 'C0ANY', text: 'hi' })).toMatchObject({
      ok: true,
    });
  });

  it('answers not_in_channel after the bot was removed, and posts again once invited', async () => {
    fake.api.channels.removeBot('C0OPS');
    expect(await call('chat.postMessage', { channel: 'C0OPS', text: 'hi' })).toEqual({
      ok: false,
      error: 'not_in_channel',
    });
    expect(await call('chat.postEphemeral', { channel: 'C0OPS', user: 'U1', text: 'x' })).toEqual({
      ok: false,
      error: 'not_in_channel',
    });
    fake.api.channels.inviteBot('C0OPS');
    expect((await call('chat.postMessage', { channel: 'C0OPS', text: 'hi' })).ok).toBe(true);
  });

  it('answers is_archived for posts and updates in an archived channel', async () => {
    const posted = await call('chat.postMessage', { channel: 'C0OPS', text: 'hi' });
    fake.api.channels.archive('C0OPS');
    expect((await call('chat.postMessage', { channel: 'C0OPS', text: 'hi' })).error).toBe(
      'is_archived',
    );
    expect((await call('chat.update', { channel: 'C0OPS', ts: posted.ts, text: 'x' })).error).toBe(
      'is_archived',
    );
  });

  it('answers channel_not_found for a channel the bot cannot see', async () => {
    fake.api.channels.hide('C0OPS');
    expect((await call('chat.postMessage', { channel: 'C0OPS', text: 'hi' })).error).toBe(
      'channel_not_found',
    );
  });

  it('answers user_not_in_channel to an ephemeral for someone who is not a member', async () => {
    fake.api.channels.setMembers('C0OPS', ['U0ALICE']);
    expect(
      (await call('chat.postEphemeral', { channel: 'C0OPS', user: 'U0BOB', text: 'x' })).error,
    ).toBe('user_not_in_channel');
    expect(
      (await call('chat.postEphemeral', { channel: 'C0OPS', user: 'U0ALICE', text: 'x' })).ok,
    ).toBe(true);
  });
});
