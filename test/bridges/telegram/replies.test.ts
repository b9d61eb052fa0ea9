/**
 * Replies in a run's reply chain (`OutgoingMessage.replyTo`) and the typing indicator, through
 * grammY and the fake Bot API: in a forum topic the reply stays in the topic, a file replies too,
 * and a message of another chat is not replied to.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { rich } from '../../../src/bridges/render-text.ts';
import type { TelegramChannel } from '../../../src/bridges/telegram/index.ts';
import { ALICE_DM, channelFor, FakeTelegram, FORUM } from './support.ts';

let fake: FakeTelegram;
let channel: TelegramChannel;

beforeEach(async () => {
  fake = await FakeTelegram.start();
  fake.addChat(ALICE_DM);
  fake.addChat(FORUM);
  channel = channelFor(fake);
});

afterEach(async () => {
  await fake.close();
});

const idOf = (ref: string) => Number(ref.slice(ref.lastIndexOf('/') + 1).split(',')[0]);

describe('replies', () => {
  it('replies to the message in its forum topic, text and files alike', async () => {
    const topicChat = `telegram:${FORUM.id}:7`;
    const status = await channel.send(topicChat, { text: rich('Run r1 · Demo') });
    await channel.send(`telegram:${FORUM.id}`, { text: rich('the answer'), replyTo: status });
    await channel.sendFile(`telegram:${FORUM.id}`, {
      name: 'answer.md',
      data: new TextEncoder().encode('long'),
      replyTo: status,
    });
    const [, answer, file] = fake.botMessages(FORUM.id);
    expect(answer).toMatchObject({ text: 'the answer', threadId: 7, replyToId: idOf(status) });
    expect(file).toMatchObject({ threadId: 7 });
    const upload = fake.calls.find((c) => c.method === 'sendDocument');
    expect(upload?.params.reply_parameters).toMatchObject({ message_id: idOf(status) });
  });

  it('ignores a message of another chat (never replies across chats)', async () => {
    const dmStatus = await channel.send(`telegram:${ALICE_DM.id}`, { text: rich('Run r2') });
    await channel.send(`telegram:${FORUM.id}`, { text: rich('loose'), replyTo: dmStatus });
    const [loose] = fake.botMessages(FORUM.id);
    expect(loose?.replyToId).toBeUndefined();
    expect(loose?.text).toBe('loose');
  });

  it('shows typing in the chat and its topic', async () => {
    expect(channel.capabilities.typing).toBe(true);
    await channel.typing(`telegram:${FORUM.id}:7`);
    const action = fake.calls.find((c) => c.method === 'sendChatAction');
    expect(action).toMatchObject({ ok: true, params: { action: 'typing', message_thread_id: 7 } });
  });
});
