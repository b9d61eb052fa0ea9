/**
 * Shared set-up for the Slack adapter tests: a fake Slack, a real SlackChannel (Bolt) pointed at
 * it, its HTTP handler on a local server (HTTP mode), and an inbox of inbound events.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ChannelLogger } from '../../../src/bridges/channel.ts';
import type { InboundEvent } from '../../../src/bridges/events.ts';
import { SlackChannel, type SlackChannelOptions } from '../../../src/bridges/slack/index.ts';
import { FakeSlack, type FakeUser } from '../../fakes/slack.ts';
import { Inbox, recordingLogger } from '../inbox.ts';

export { Inbox, recordingLogger };

/** People and places in the tests. */
export const ALICE: FakeUser = { id: 'U0ALICE', name: 'alice' };
export const BOB: FakeUser = { id: 'U0BOB', name: 'bob' };
export const OPS = 'C0OPS';

/** A running HTTP-mode channel wired to a fake; `react` runs before an event lands in the inbox. */
export interface Harness {
  readonly fake: FakeSlack;
  readonly channel: SlackChannel;
  readonly inbox: Inbox;
  readonly logger: ReturnType<typeof recordingLogger>;
  react: (event: InboundEvent) => Promise<void>;
  close(): Promise<void>;
}

/** Options every test channel gets: the fake's URL, no WebClient retries, short 429 waits. */
export function testOptions(fake: FakeSlack, logger: ChannelLogger): SlackChannelOptions {
  return {
    botToken: fake.botToken,
    signingSecret: fake.signingSecret,
    apiUrl: fake.apiUrl,
    webClientRetries: { retries: 0 },
    retry: { maxRetries: 3, maxWaitMs: 2_000 },
    logger,
  };
}

/** Starts a fake, a channel in HTTP mode and a local server mounting its handler at /slack/. */
export async function startHttpHarness(extra: Partial<SlackChannelOptions> = {}): Promise<Harness> {
  const fake = await FakeSlack.start();
  const logger = recordingLogger();
  const channel = new SlackChannel({ ...testOptions(fake, logger), ...extra });
  const server: Server = createServer((req, res) => void channel.handleRequest(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.target = `http://127.0.0.1:${(server.address() as AddressInfo).port}/slack/events`;
  const inbox = new Inbox();
  const harness: Harness = {
    fake,
    channel,
    inbox,
    logger,
    react: async () => {},
    close: async () => {
      await channel.stop();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await fake.close();
    },
  };
  await channel.start(async (event) => {
    await harness.react(event);
    inbox.push(event);
  });
  return harness;
}

/** The ts list of a message ref (`…/ts1,ts2`). */
export const tsOf = (ref: string): string[] => ref.slice(ref.lastIndexOf('/') + 1).split(',');

export { FakeSlack };
