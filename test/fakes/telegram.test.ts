/**
 * The fake Bot API itself, spoken to with plain fetch, so tests that rely on it can trust its
 * protocol: tokens, form bodies, long polling with offsets, webhook conflicts, HTML checks.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeTelegram } from './telegram.ts';
import { LimitEnforcer } from './telegram-limits.ts';

let fake: FakeTelegram;

beforeEach(async () => {
  fake = await FakeTelegram.start();
});

afterEach(async () => {
  await fake.close();
});

const call = async (method: string, body: Record<string, unknown>, token = fake.token) => {
  const res = await fetch(`${fake.apiRoot}/bot${token}/${method}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};

describe('FakeTelegram', () => {
  it('answers 401 to a wrong token and 404 to an unknown method', async () => {
    expect((await call('getMe', {}, '1:wrong')).status).toBe(401);
    expect((await call('sendTelepathy', {})).body).toMatchObject({ ok: false, error_code: 404 });
  });

  it('accepts urlencoded bodies with JSON-string values, like Telegram', async () => {
    fake.addChat({ id: 7, type: 'private' });
    const form = new URLSearchParams({
      chat_id: '7',
      text: '<b>hi</b>',
      parse_mode: 'HTML',
      reply_markup: JSON.stringify({ inline_keyboard: [[{ text: 'A', callback_data: 'a' }]] }),
    });
    const res = await fetch(`${fake.apiRoot}/bot${fake.token}/sendMessage`, {
      method: 'POST',
      body: form,
    });
    expect(await res.json()).toMatchObject({ ok: true, result: { chat: { id: 7 }, text: 'hi' } });
    expect(fake.botMessages(7)[0]!.replyMarkup).toEqual({
      inline_keyboard: [[{ text: 'A', callback_data: 'a' }]],
    });
  });

  it('refuses what Telegram refuses: bad HTML, long text, long callback data, unknown chats', async () => {
    fake.addChat({ id: 7, type: 'private' });
    const send = (extra: Record<string, unknown>) =>
      call('sendMessage', { chat_id: 7, text: 'x', ...extra });
    expect((await send({ text: '<script>', parse_mode: 'HTML' })).status).toBe(400);
    expect((await send({ text: 'a < b', parse_mode: 'HTML' })).status).toBe(400);
    expect((await send({ text: 'y'.repeat(4097) })).status).toBe(400);
    const tooLong = { inline_keyboard: [[{ text: 'A', callback_data: 'z'.repeat(65) }]] };
    expect((await send({ reply_markup: tooLong })).body.description).toContain(
      'BUTTON_DATA_INVALID',
    );
    expect((await call('sendMessage', { chat_id: 8, text: 'x' })).status).toBe(400);
  });

  it('holds getUpdates until an update arrives, and an offset confirms earlier ones', async () => {
    const held = call('getUpdates', { offset: 0, timeout: 20 });
    while (fake.waitingPolls === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    const first = fake.pushUpdate({ message: { message_id: 1 } });
    const { body } = await held;
    expect(body.result).toEqual([first]);
    const second = fake.pushUpdate({ message: { message_id: 2 } });
    expect((await call('getUpdates', { offset: first.update_id + 1 })).body.result).toEqual([
      second,
    ]);
    expect((await call('getUpdates', { offset: second.update_id + 1 })).body.result).toEqual([]);
  });

  it('refuses getUpdates while a webhook is set', async () => {
    await call('setWebhook', { url: 'http://127.0.0.1:9/hook', secret_token: 's' });
    expect((await call('getUpdates', {})).status).toBe(409);
    expect((await call('setWebhook', { url: 'x', secret_token: 'bad secret' })).status).toBe(400);
  });

  it('fails every n-th call with a 429 carrying retry_after', async () => {
    fake.failEvery(2, { retry_after: 3 });
    expect((await call('getMe', {})).status).toBe(200);
    expect((await call('getMe', {})).body).toMatchObject({
      error_code: 429,
      parameters: { retry_after: 3 },
    });
  });

  it('with limits on, answers 429 over 1 message/s in a chat and 20/min in a group, not counting refused calls', async () => {
    const limited = await FakeTelegram.start({
      limits: {
        perChat: { max: 1, windowMs: 1000 },
        perGroup: { max: 3, windowMs: 60_000 },
        overall: { max: 30, windowMs: 1000 },
      },
    });
    try {
      limited.addChat({ id: -5, type: 'supergroup', title: 'G' });
      limited.addChat({ id: 6, type: 'private' });
      const send = async (chat_id: number) => {
        const res = await fetch(`${limited.apiRoot}/bot${limited.token}/sendMessage`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ chat_id, text: 'x' }),
        });
        return (await res.json()) as Record<string, unknown>;
      };
      expect(await send(6)).toMatchObject({ ok: true });
      expect(await send(6)).toMatchObject({ error_code: 429, parameters: { retry_after: 1 } });
      // Another chat is not held back by chat 6.
      expect(await send(-5)).toMatchObject({ ok: true });
      await new Promise((r) => setTimeout(r, 1000));
      expect(await send(-5)).toMatchObject({ ok: true });
      await new Promise((r) => setTimeout(r, 1000));
      expect(await send(-5)).toMatchObject({ ok: true });
      await new Promise((r) => setTimeout(r, 1000));
      // The group's fourth message within a minute: refused until the first leaves the window.
      const fourth = await send(-5);
      expect(fourth).toMatchObject({ error_code: 429 });
      expect((fourth.parameters as { retry_after: number }).retry_after).toBeGreaterThan(50);
      expect(limited.botMessages(-5)).toHaveLength(3);
    } finally {
      await limited.close();
    }
  });

  it('with the FAQ limits, a chat takes a short burst of three, then one a second (a token bucket)', () => {
    let now = 10_000;
    const limits = new LimitEnforcer(true, () => now);
    const send = () => limits.admit('sendMessage', { chat_id: 6 });
    expect([send(), send(), send()]).toEqual([undefined, undefined, undefined]);
    expect(send()).toMatchObject({ code: 429, parameters: { retry_after: 1 } });
    now += 999;
    expect(send()).toMatchObject({ code: 429 });
    now += 1; // one token back after a second
    expect(send()).toBeUndefined();
    expect(send()).toMatchObject({ code: 429 });
    // Quiet for three seconds: the whole burst is back.
    now += 3000;
    expect([send(), send(), send()]).toEqual([undefined, undefined, undefined]);
    expect(send()).toMatchObject({ code: 429 });
  });

  it('a second poller on the token ends the held poll with 409', async () => {
    const first = call('getUpdates', { timeout: 30 });
    await new Promise<void>((resolve) => {
      const check = () => (fake.waitingPolls > 0 ? resolve() : setTimeout(check, 5));
      check();
    });
    const second = call('getUpdates', { timeout: 0 });
    expect(await first).toMatchObject({
      status: 409,
      body: { description: expect.stringMatching(/terminated by other getUpdates request/) },
    });
    expect((await second).status).toBe(200);
  });

  it('refuses a removed bot, a blocked bot, a migrated group and a closed or deleted topic', async () => {
    const group = fake.addChat({ id: -5, type: 'group' });
    const dm = fake.addChat({ id: 9, type: 'private' });
    const forum = fake.addChat({ id: -100777, type: 'supergroup', is_forum: true });
    const send = (chat_id: number, extra: Record<string, unknown> = {}) =>
      call('sendMessage', { chat_id, text: 'hi', ...extra });
    fake.store.access.removeBot(group);
    expect((await send(-5)).body).toMatchObject({
      error_code: 403,
      description: 'Forbidden: bot was kicked from the group chat',
    });
    fake.store.access.addBot(-5);
    expect((await send(-5)).status).toBe(200);
    fake.store.access.removeBot(dm);
    expect((await send(9)).body.description).toBe('Forbidden: bot was blocked by the user');
    fake.addChat(fake.store.access.upgradeToSupergroup(group, -1005));
    expect((await send(-5)).body).toMatchObject({
      error_code: 400,
      parameters: { migrate_to_chat_id: -1005 },
    });
    expect((await send(-1005)).status).toBe(200);
    fake.store.access.closeTopic(forum.id, 3);
    expect((await send(forum.id, { message_thread_id: 3 })).body.description).toBe(
      'Bad Request: TOPIC_CLOSED',
    );
    fake.store.access.deleteTopic(forum.id, 4);
    expect((await send(forum.id, { message_thread_id: 4 })).body.description).toBe(
      'Bad Request: message thread not found',
    );
    expect((await send(forum.id)).status).toBe(200);
  });
});
