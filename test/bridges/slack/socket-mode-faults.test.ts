/**
 * What Slack does to a Socket Mode connection on its own, from the fake, with the real
 * @slack/socket-mode client the adapter runs: a `disconnect` message (`refresh_requested`) makes
 * it open a new connection (apps.connections.open again) before the old one closes, and an
 * abrupt drop makes it reconnect; either way commands keep arriving.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Command } from '../../../src/bridges/events.ts';
import { SlackChannel } from '../../../src/bridges/slack/index.ts';
import { FakeSlack } from '../../fakes/slack.ts';
import { ALICE, Inbox, OPS, recordingLogger, testOptions } from './support.ts';

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

/** Resolves once apps.connections.open was answered `count` times and a socket is connected. */
async function connections(count: number): Promise<void> {
  while (fake.okCalls('apps.connections.open').length < count || !fake.socketConnected) {
    await new Promise((r) => setTimeout(r, 10));
  }
}

async function stillReceives(text: string): Promise<void> {
  await fake.sendCommand({ user: ALICE, channel: OPS, text });
  expect(((await inbox.next()) as Command).name).toBe(text);
}

describe('Slack Socket Mode faults', () => {
  it('disconnect refresh_requested: opens a new connection and keeps receiving', async () => {
    fake.requestSocketRefresh();
    await connections(2);
    await stillReceives('status');
  });

  it('an abrupt drop: reconnects and keeps receiving', async () => {
    fake.dropSocket();
    await connections(2);
    await stillReceives('runs');
  });
});
