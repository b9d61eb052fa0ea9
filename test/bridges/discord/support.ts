/**
 * Shared set-up for the Discord adapter tests: a fake Discord, a channel pointed at it, and an
 * inbox that hands out inbound events in arrival order (with an optional handler behaviour).
 */
import type { ChannelLogger } from '../../../src/bridges/channel.ts';
import { DiscordChannel, type DiscordChannelOptions } from '../../../src/bridges/discord/index.ts';
import { FakeDiscord, type FakeDiscordOptions } from '../../fakes/discord.ts';
import { Inbox } from '../inbox.ts';

export { Inbox };

/** A logger that keeps what it was told, so tests can read warnings and errors. */
export function recordingLogger(): ChannelLogger & {
  lines: { level: string; msg?: string; obj: object }[];
} {
  const lines: { level: string; msg?: string; obj: object }[] = [];
  const at = (level: string) => (obj: object, msg?: string) => {
    if (level !== 'debug') lines.push({ level, obj, ...(msg !== undefined && { msg }) });
  };
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

/** A started fake, a started channel and its inbox; `close()` stops both. */
export interface Harness {
  readonly fake: FakeDiscord;
  readonly channel: DiscordChannel;
  readonly inbox: Inbox;
  readonly log: ReturnType<typeof recordingLogger>;
  /** `discord:<guild>:<text channel>`. */
  readonly chatRef: string;
  close(): Promise<void>;
}

/** Starts a fake and a channel connected to it. */
export async function startHarness(
  extra: Partial<DiscordChannelOptions> = {},
  fakeOptions: FakeDiscordOptions = {},
): Promise<Harness> {
  // The adapter asks for Message Content when the application allows it (else it warns).
  const fake = await FakeDiscord.start({ messageContent: true, ...fakeOptions });
  const log = recordingLogger();
  const channel = new DiscordChannel({
    token: fake.token,
    apiUrl: fake.apiUrl,
    logger: log,
    ...extra,
  });
  const inbox = new Inbox();
  try {
    await channel.start(inbox.handler);
  } catch (err) {
    await fake.close();
    throw err;
  }
  return {
    fake,
    channel,
    inbox,
    log,
    chatRef: `discord:${fake.state.guildId}:${fake.state.text.id}`,
    async close() {
      await channel.stop();
      await fake.close();
    },
  };
}
