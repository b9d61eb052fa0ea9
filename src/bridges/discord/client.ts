/**
 * The discord.js Client of a DiscordChannel: REST pointed at the configured API (rate limits
 * longer than `maxRateLimitWaitMs` refused rather than waited out), DM channels cached, no
 * mentions by default, every REST response counted (`onApiCall`), and the client's own events
 * logged. The channel adds its inbound handlers.
 */
import { Client, Events, Partials } from 'discord.js';
import { Agent } from 'undici';
import type { ChannelLogger } from '../channel.ts';
import type { DiscordChannelOptions } from './options.ts';
import { DISCORD_INTENTS } from './permissions.ts';

const DEFAULT_API = 'https://discord.com/api';

/**
 * discord.js's REST dispatcher, of the undici it was built for (6). Left to the process-wide one,
 * it gets whichever undici loaded first: @slack/bolt's 7 broke multipart uploads ("action is not
 * a function", discord.js issues #10946, #11525). One per process, as the global one it replaces.
 */
const REST_AGENT = new Agent();

/** A client set up for `options`, not logged in. */
export function createDiscordClient(options: DiscordChannelOptions, log: ChannelLogger): Client {
  const maxWait = options.maxRateLimitWaitMs ?? 60_000;
  const client = new Client({
    intents: DISCORD_INTENTS.map((i) => i.bit),
    // DM channels are not cached without this, and the chat ref needs the channel.
    partials: [Partials.Channel],
    allowedMentions: { parse: [] },
    rest: {
      api: (options.apiUrl ?? DEFAULT_API).replace(/\/+$/, ''),
      version: '10',
      agent: REST_AGENT,
      rejectOnRateLimit: (limit) => Math.max(limit.retryAfter, limit.sublimitTimeout) > maxWait,
    },
  });
  const onApiCall = options.onApiCall;
  if (onApiCall) {
    // Every REST response, including the 429s discord.js waits out itself.
    client.rest.on('response', (_request, response) => {
      onApiCall(response.status === 429 ? 'rate_limited' : response.ok ? 'ok' : 'error');
    });
  }
  client.on(Events.Error, (err) => log.error({ err }, 'discord: client error'));
  client.on(Events.ShardError, (err) => log.warn({ err }, 'discord: gateway error'));
  client.on(Events.ShardReconnecting, () => log.info({}, 'discord: reconnecting'));
  client.on(Events.ShardResume, (_id, replayed) =>
    log.info({ replayed }, 'discord: gateway session resumed'),
  );
  client.on(Events.Debug, (message) => log.debug({ message }, 'discord.js'));
  return client;
}
