/**
 * Replies in a message's thread (`OutgoingMessage.replyTo`) and the typing indicator, through
 * real discord.js and the fake: a thread is opened on the message once and reused, a thread a
 * person opened there already is joined, a message already in a thread is answered in it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { rich } from '../../../src/bridges/render-text.ts';
import { type Harness, startHarness } from './support.ts';

let h: Harness | undefined;
afterEach(async () => {
  const problems = h?.log.lines.filter((l) => l.level === 'warn' || l.level === 'error');
  await h?.close();
  h = undefined;
  expect(problems ?? []).toEqual([]);
});

const idOf = (ref: string) => ref.slice(ref.lastIndexOf('/') + 1);
const textOf = (h: Harness, channelId: string) =>
  h.fake.state.channelMessages(channelId).map((m) => m.embeds[0]?.description);

describe('replies in a thread', () => {
  it('opens a thread on the message once, named by the first reply, and keeps posting in it', async () => {
    h = await startHarness();
    const status = await h.channel.send(h.chatRef, { text: rich('Run r1 · Demo') });
    const statusId = idOf(status);
    const first = await h.channel.send(h.chatRef, {
      text: rich('💬 plan (attempt 1) — run r1\nthe plan'),
      replyTo: status,
    });
    await h.channel.send(h.chatRef, { text: rich('💬 build (attempt 1)'), replyTo: status });
    expect(first).toBe(`${h.chatRef}:${statusId}/${idOf(first)}`);
    const opened = h.fake.okCalls('POST', /\/messages\/\d+\/threads$/);
    expect(opened).toHaveLength(1);
    expect(opened[0]!.body).toMatchObject({ name: '💬 plan (attempt 1) — run r1' });
    expect(textOf(h, statusId)).toEqual([
      '💬 plan \\(attempt 1\\) — run r1\nthe plan',
      '💬 build \\(attempt 1\\)',
    ]);
    expect(textOf(h, h.fake.state.text.id)).toEqual(['Run r1 · Demo']);
  });

  it('joins the thread a person already opened on the message', async () => {
    h = await startHarness();
    const status = await h.channel.send(h.chatRef, { text: rich('Run r2 · Demo') });
    const { state } = h.fake;
    const id = idOf(status);
    state.channels.set(id, {
      id,
      kind: 'thread',
      guildId: state.guildId,
      parentId: state.text.id,
      name: 'talk',
    });
    await h.channel.send(h.chatRef, { text: rich('the answer'), replyTo: status });
    expect(textOf(h, id)).toEqual(['the answer']);
  });

  it('answers a message that is in a thread in that thread, opening none', async () => {
    h = await startHarness();
    const { state } = h.fake;
    const threadChat = `${h.chatRef}:${state.thread.id}`;
    const status = await h.channel.send(threadChat, { text: rich('Run r3 · Demo') });
    await h.channel.send(threadChat, { text: rich('the answer'), replyTo: status });
    expect(h.fake.okCalls('POST', /\/threads$/)).toEqual([]);
    expect(textOf(h, state.thread.id)).toEqual(['Run r3 · Demo', 'the answer']);
  });

  it('shows typing in the chat (Trigger Typing Indicator)', async () => {
    h = await startHarness();
    expect(h.channel.capabilities.typing).toBe(true);
    await h.channel.typing(h.chatRef);
    expect(h.fake.state.typing).toEqual([h.fake.state.text.id]);
  });
});
