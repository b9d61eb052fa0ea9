/**
 * The fake Telegram's webhook redelivery, against a plain node:http receiver: the same update
 * (same update_id) comes again after a non-2xx answer, after an answer later than the timeout on
 * the fake's clock, and after a refused connection; getWebhookInfo shows the last error and the
 * pending count; an update still undelivered when the webhook is removed waits for getUpdates.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeTelegram } from './telegram.ts';

const CHAT = { id: 7, type: 'private' as const };
const ALICE = { id: 11, is_bot: false, first_name: 'Alice' };

let fake: FakeTelegram;
let receiver: Server;
/** How far the fake's clock is ahead of real time. */
let ahead = 0;
/** The receiver's answers, in order; after the last, 200. */
let answers: number[] = [];
/** Called before the receiver answers (the test can move the fake's clock then). */
let beforeAnswer: () => void = () => undefined;
const received: { updateId: number; secret: string | undefined }[] = [];

beforeEach(async () => {
  ahead = 0;
  answers = [];
  received.length = 0;
  beforeAnswer = () => undefined;
  fake = await FakeTelegram.start({
    now: () => Date.now() + ahead,
    webhook: { timeoutMs: 60_000, retryMs: 5, maxAttempts: 5 },
  });
  fake.addChat(CHAT);
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => {
      body += c.toString();
    });
    req.on('end', () => {
      const update = JSON.parse(body) as { update_id: number };
      const secret = req.headers['x-telegram-bot-api-secret-token'];
      received.push({ updateId: update.update_id, secret: secret as string | undefined });
      beforeAnswer();
      res.writeHead(answers.shift() ?? 200).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
});

afterEach(async () => {
  await fake.close();
  receiver.closeAllConnections();
  await new Promise<void>((resolve) => receiver.close(() => resolve()));
});

const url = () => `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
const call = async (method: string, body: Record<string, unknown>) => {
  const res = await fetch(`${fake.apiRoot}/bot${fake.token}/${method}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return (await res.json()) as { ok: boolean; result: Record<string, unknown> };
};

describe('FakeTelegram webhook redelivery', () => {
  it('sends the same update again after a non-2xx answer, until it is taken', async () => {
    await call('setWebhook', { url: url(), secret_token: 'sec_1' });
    answers = [500, 503];
    const update = fake.userSends({ chat: CHAT, from: ALICE, text: '/status' });
    expect(await fake.webhookStatuses()).toEqual([200]);
    expect(received).toEqual([
      { updateId: update.update_id, secret: 'sec_1' },
      { updateId: update.update_id, secret: 'sec_1' },
      { updateId: update.update_id, secret: 'sec_1' },
    ]);
    expect(fake.delivery.attempts.map((a) => a.outcome)).toEqual([500, 503, 200]);
    const info = (await call('getWebhookInfo', {})).result;
    expect(info).toMatchObject({
      pending_update_count: 0,
      last_error_message: 'Wrong response from the webhook: 503',
    });
  });

  it('counts an answer later than its timeout as none, and sends the update again', async () => {
    await call('setWebhook', { url: url(), secret_token: 'sec_1' });
    let first = true;
    beforeAnswer = () => {
      // The receiver takes 61 s (on the fake's clock) over the first delivery only.
      if (first) ahead += 61_000;
      first = false;
    };
    const update = fake.userSends({ chat: CHAT, from: ALICE, text: '/status' });
    expect(await fake.webhookStatuses()).toEqual([200]);
    expect(received.map((r) => r.updateId)).toEqual([update.update_id, update.update_id]);
    expect(fake.delivery.attempts.map((a) => a.outcome)).toEqual(['timeout', 200]);
    expect(fake.webhookError.last_error_message).toBe('Read timeout expired');
  });

  it('sends again when nothing listens, and gives up after the attempts allowed', async () => {
    await call('setWebhook', { url: 'http://127.0.0.1:9/hook', secret_token: 'sec_1' });
    fake.userSends({ chat: CHAT, from: ALICE, text: '/status' });
    expect(await fake.webhookStatuses()).toEqual([0]);
    expect(fake.delivery.attempts.map((a) => a.outcome)).toEqual(Array(5).fill('unreachable'));
    expect(fake.webhookError.last_error_message).toBe('Connection refused');
  });

  it('keeps an update it could not deliver for getUpdates once the webhook is removed', async () => {
    await call('setWebhook', { url: url(), secret_token: 'sec_1' });
    answers = [502];
    beforeAnswer = () => {
      // The webhook is removed (as deleteWebhook does) while the first attempt is answered.
      fake.webhook = { url: '', secret: undefined };
    };
    const update = fake.userSends({ chat: CHAT, from: ALICE, text: '/status' });
    await fake.webhookStatuses();
    const polled = await call('getUpdates', { timeout: 0 });
    expect((polled.result as unknown as { update_id: number }[]).map((u) => u.update_id)).toEqual([
      update.update_id,
    ]);
  });
});
