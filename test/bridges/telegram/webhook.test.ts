/**
 * The Telegram channel in webhook mode: the fake Bot API POSTs updates to a node:http server that
 * mounts `handleWebhook`, as Telegram would; plus option validation.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Command } from '../../../src/bridges/events.ts';
import { MemoryChannelState } from '../../../src/bridges/state.ts';
import { TelegramChannel, validateTelegramOptions } from '../../../src/bridges/telegram/index.ts';
import { ConfigError } from '../../../src/errors.ts';
import { ALICE, ALICE_DM, channelFor, FakeTelegram, Inbox } from './support.ts';

const SECRET = 'wh-secret_0123456789';

let fake: FakeTelegram;
let server: Server;
let url: string;
let channel: TelegramChannel;
let inbox: Inbox;

beforeEach(async () => {
  fake = await FakeTelegram.start();
  server = createServer((req, res) => void channel.handleWebhook(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/telegram/webhook`;
  inbox = new Inbox();
  channel = channelFor(fake, { webhook: { url, secret: SECRET } });
});

afterEach(async () => {
  await channel.stop();
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await fake.close();
});

const post = (headers: Record<string, string>, body: unknown) =>
  fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });

describe('TelegramChannel (webhook)', () => {
  it('registers the webhook with its secret instead of polling', async () => {
    await channel.start(async (e) => inbox.push(e));
    expect(fake.webhook).toEqual({ url, secret: SECRET });
    expect(fake.calls.some((c) => c.method === 'getUpdates')).toBe(false);
  });

  it('answers 401 to a missing or wrong secret and never calls the handler', async () => {
    await channel.start(async (e) => inbox.push(e));
    const forged = {
      update_id: 1,
      message: {
        message_id: 1,
        date: 1,
        chat: ALICE_DM,
        from: ALICE,
        text: '/run x',
        entities: [{ type: 'bot_command', offset: 0, length: 4 }],
      },
    };
    expect((await post({}, forged)).status).toBe(401);
    expect((await post({ 'x-telegram-bot-api-secret-token': 'wrong' }, forged)).status).toBe(401);

    fake.userSends({ chat: ALICE_DM, from: ALICE, text: '/status' });
    expect(await fake.webhookStatuses()).toEqual([200]);
    expect(inbox.all.map((e) => (e as Command).name)).toEqual(['status']);
  });

  it('handles an update carrying the right secret', async () => {
    await channel.start(async (e) => inbox.push(e));
    fake.userSends({ chat: ALICE_DM, from: ALICE, text: '/run add-login' });
    const event = (await inbox.next()) as Command;
    expect(event).toMatchObject({
      kind: 'command',
      name: 'run',
      args: ['add-login'],
      chatRef: 'telegram:501',
    });
  });

  it('applies an update Telegram sends again once, also in a new channel on the same store', async () => {
    const state = new MemoryChannelState();
    await channel.stop();
    channel = channelFor(fake, { webhook: { url, secret: SECRET }, state });
    await channel.start(async (e) => inbox.push(e));
    const update = {
      update_id: 4242,
      message: {
        message_id: 9,
        date: 1,
        chat: ALICE_DM,
        from: ALICE,
        text: '/status',
        entities: [{ type: 'bot_command', offset: 0, length: 7 }],
      },
    };
    const headers = { 'x-telegram-bot-api-secret-token': SECRET };
    // Two deliveries at once (a redelivery while the first is still handled), then one more.
    const both = await Promise.all([post(headers, update), post(headers, update)]);
    expect(both.map((r) => r.status)).toEqual([200, 200]);
    expect((await post(headers, update)).status).toBe(200);
    expect(inbox.all).toHaveLength(1);

    // The next process (a new channel) on the same store does not apply it either.
    await channel.stop();
    channel = channelFor(fake, { webhook: { url, secret: SECRET }, state });
    await channel.start(async (e) => inbox.push(e));
    expect((await post(headers, update)).status).toBe(200);
    expect((await post(headers, { ...update, update_id: 4243 })).status).toBe(200);
    // A new update (another update_id) still gets through.
    expect(inbox.all).toHaveLength(2);
  });

  it('answers 503 before start and after stop, 405 to other methods', async () => {
    expect((await post({ 'x-telegram-bot-api-secret-token': SECRET }, {})).status).toBe(503);
    await channel.start(async (e) => inbox.push(e));
    expect((await fetch(url)).status).toBe(405);
    await channel.stop();
    expect((await post({ 'x-telegram-bot-api-secret-token': SECRET }, {})).status).toBe(503);
  });

  it('refuses to start without a webhook secret (ConfigError)', () => {
    const options = {
      token: fake.token,
      apiRoot: fake.apiRoot,
      commands: [],
      webhook: { url, secret: '' },
    };
    expect(() => new TelegramChannel(options)).toThrow(ConfigError);
    expect(validateTelegramOptions(options).map((p) => p.path)).toEqual([
      'telegram.webhook.secret',
    ]);
  });

  it('takes a pino logger as its logger', () => {
    const options = { token: fake.token, commands: [], logger: pino({ level: 'silent' }) };
    expect(new TelegramChannel(options).capabilities.maxTextLength).toBe(4096);
  });

  it('lists every invalid option at once', () => {
    const problems = validateTelegramOptions({
      token: 'not-a-token',
      webhook: { url: 'http://insecure.example/hook', secret: 'has spaces' },
      commands: [{ command: 'Run', description: 'x' }],
    });
    expect(problems.map((p) => p.path)).toEqual([
      'telegram.token',
      'telegram.webhook.secret',
      'telegram.webhook.url',
      'telegram.commands[0]',
    ]);
    expect(JSON.stringify(problems)).not.toContain('not-a-token');
  });
});
