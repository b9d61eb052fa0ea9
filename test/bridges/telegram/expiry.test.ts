/**
 * Callback queries expire: Telegram takes an answer for about 15 s. The fake's clock is moved
 * instead of sleeping. The fake's own protocol (plain fetch), and grammY through the adapter: a
 * private answer to an expired press still reaches the presser, as a reply in the chat.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ButtonPress, InboundEvent } from '../../../src/bridges/events.ts';
import { rich } from '../../../src/bridges/render-text.ts';
import type { TelegramChannel } from '../../../src/bridges/telegram/index.ts';
import { CALLBACK_QUERY_TTL_MS } from '../../fakes/telegram.ts';
import { ALICE, ALICE_DM, channelFor, FakeTelegram, Inbox, recordingLogger } from './support.ts';

let now = 1_700_000_000_000;
let fake: FakeTelegram;

beforeEach(async () => {
  now = 1_700_000_000_000;
  fake = await FakeTelegram.start({ now: () => now });
  fake.addChat(ALICE_DM);
});
afterEach(async () => {
  await fake.close();
});

describe('the fake Telegram expires callback queries (plain fetch)', () => {
  const answer = (id: string) =>
    fetch(`${fake.apiRoot}/bot${fake.token}/answerCallbackQuery`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ callback_query_id: id, text: 'ok' }),
    }).then(async (r) => ({
      status: r.status,
      body: (await r.json()) as { description?: string },
    }));

  /** A bot message with a button, pressed by Alice; returns the query id. */
  function press(): string {
    const m = fake.store.sendText({
      chat_id: ALICE_DM.id,
      text: 'cp',
      reply_markup: { inline_keyboard: [[{ text: 'Go', callback_data: 'k' }]] },
    });
    const u = fake.userPresses({
      chatId: ALICE_DM.id,
      messageId: m.message_id,
      from: ALICE,
      label: 'Go',
    });
    return String((u.callback_query as { id: string }).id);
  }

  it('answers within 15 s, refuses after', async () => {
    const fresh = press();
    now += CALLBACK_QUERY_TTL_MS;
    expect((await answer(fresh)).status).toBe(200);
    const old = press();
    now += CALLBACK_QUERY_TTL_MS + 1;
    const late = await answer(old);
    expect(late.status).toBe(400);
    expect(late.body.description).toMatch(/query is too old/);
  });
});

describe('TelegramChannel answering an expired press', () => {
  let channel: TelegramChannel;
  const inbox = new Inbox();

  beforeEach(async () => {
    channel = channelFor(fake, { logger: recordingLogger() });
    await channel.start(async (event: InboundEvent) => {
      // The handler is slow: the query expires before it answers.
      if (event.kind === 'button') {
        now += CALLBACK_QUERY_TTL_MS + 1_000;
        await channel.answer(event.interaction, 'Only approvers can approve.', { private: true });
      }
      inbox.push(event);
    });
  });
  afterEach(async () => {
    await channel.stop();
  });

  it('falls back to a reply in the chat', async () => {
    const ref = await channel.send(`telegram:${ALICE_DM.id}`, {
      text: rich('Checkpoint'),
      buttons: [{ id: 'tok', label: 'Approve' }],
    });
    const messageId = Number(ref.split('/')[1]!.split(',').at(-1));
    fake.userPresses({ chatId: ALICE_DM.id, messageId, from: ALICE, label: 'Approve' });
    expect(((await inbox.next()) as ButtonPress).kind).toBe('button');
    const reply = fake.botMessages(ALICE_DM.id).at(-1)!;
    expect(reply.text).toBe('Only approvers can approve.');
    expect(reply.replyToId).toBe(messageId);
    expect(fake.calls.filter((c) => c.method === 'answerCallbackQuery')[0]).toMatchObject({
      ok: false,
      errorCode: 400,
    });
  });
});
