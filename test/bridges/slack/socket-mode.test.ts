/**
 * The Slack channel in Socket Mode (an app token is set): real Bolt and @slack/socket-mode against
 * the fake's apps.connections.open and WebSocket, envelopes acked over the socket.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ButtonPress, Command, Reply } from '../../../src/bridges/events.ts';
import { rich } from '../../../src/bridges/render-text.ts';
import { SlackChannel } from '../../../src/bridges/slack/index.ts';
import { FakeSlack } from '../../fakes/slack.ts';
import { ALICE, Inbox, OPS, recordingLogger, testOptions, tsOf } from './support.ts';

let fake: FakeSlack;
let channel: SlackChannel;
let inbox: Inbox;

beforeEach(async () => {
  fake = await FakeSlack.start();
  const { signingSecret: _unused, ...options } = testOptions(fake, recordingLogger());
  channel = new SlackChannel({ ...options, appToken: fake.appToken });
  inbox = new Inbox();
  await channel.start(async (event) => inbox.push(event));
});

afterEach(async () => {
  await channel.stop();
  await fake.close();
});

describe('SlackChannel (Socket Mode)', () => {
  it('connects with the app token and refuses HTTP requests', async () => {
    expect(channel.mode).toBe('socket');
    expect(fake.socketConnected).toBe(true);
    expect(fake.okCalls('apps.connections.open')).toHaveLength(1);
    const res = { code: 0, writeHead: (c: number) => ({ end: () => (res.code = c) }) };
    await channel.handleRequest({ method: 'POST' } as never, res as never);
    expect(res.code).toBe(404);
  });

  it('receives a slash command over the socket and acks its envelope', async () => {
    const delivery = await fake.sendCommand({
      user: ALICE,
      channel: OPS,
      text: 'run demo add login',
    });
    expect(delivery.status).toBe(200);
    const event = (await inbox.next()) as Command;
    expect(event).toMatchObject({
      name: 'run',
      args: ['demo', 'add', 'login'],
      chatRef: 'slack:T0FAKE01:C0OPS',
    });
    // Socket Mode's own retries carry the same payload, so the same key.
    await fake.deliver(delivery.request, 1);
    expect((await inbox.next()).idempotencyKey).toBe(event.idempotencyKey);
  });

  it('receives a thread reply as a Reply to the thread parent; a redelivery has the same key', async () => {
    const ref = await channel.send('slack:T0FAKE01:C0OPS', { text: rich('Checkpoint plan:1') });
    const parent = tsOf(ref)[0]!;
    const delivery = await fake.sendThreadReply({
      user: ALICE,
      channel: OPS,
      threadTs: parent,
      text: 'use bcrypt',
    });
    const event = (await inbox.next()) as Reply;
    expect(event).toMatchObject({
      kind: 'reply',
      text: 'use bcrypt',
      replyToMessageRef: ref,
      chatRef: `slack:T0FAKE01:C0OPS:${parent}`,
    });
    await fake.deliver(delivery.request, 1);
    expect((await inbox.next()).idempotencyKey).toBe(event.idempotencyKey);
  });

  it('receives mentions and button presses', async () => {
    await fake.sendMention({ user: ALICE, channel: OPS, text: 'status' });
    expect(((await inbox.next()) as Command).name).toBe('status');
    const ref = await channel.send('slack:T0FAKE01:C0OPS', {
      text: rich('Checkpoint'),
      buttons: [{ id: 'tok-1', label: 'Approve' }],
    });
    await fake.pressButton({ user: ALICE, channel: OPS, ts: tsOf(ref)[0]!, label: 'Approve' });
    expect((await inbox.next()) as ButtonPress).toMatchObject({
      kind: 'button',
      token: 'tok-1',
      messageRef: ref,
    });
  });

  it('disconnects on stop', async () => {
    await channel.stop();
    await expect.poll(() => fake.socketConnected).toBe(false);
  });
});
