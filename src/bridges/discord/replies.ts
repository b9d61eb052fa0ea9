/**
 * People's messages on Discord, for replies as guidance: the gateway intents (Message Content
 * only when the application has it enabled, asking otherwise closes the gateway with 4014), a
 * MESSAGE_CREATE read as a Reply, and the private word to one person (a DM; Discord has no
 * ephemeral for plain messages), pinging them alone in the chat when their DMs are closed.
 */
import { type Client, IntentsBitField, Routes } from 'discord.js';
import type { ChannelLogger } from '../channel.ts';
import type { SerialQueues } from '../delivery.ts';
import type { ChatUser, Command, DirectText, Edit, Reply } from '../events.ts';
import { rich } from '../render-text.ts';
import { discordCall as call } from './errors.ts';
import { messageFactsOf, toBareMention, toDirectText, toEdit, toGuidanceReply } from './inbound.ts';
import { MAX_CONTENT, NO_MENTIONS, renderDescriptions } from './outbound.ts';
import {
  DISCORD_INTENTS,
  MESSAGE_CONTENT_FIX,
  MESSAGE_CONTENT_INTENT,
  messageContentEnabled,
} from './permissions.ts';
import { channelIdOf, targetOf } from './refs.ts';

/**
 * Sets the client's intents before login from the application's flags; true when Message Content
 * is among them. Without it the log says, once, that replies are not seen and how to fix it.
 */
export async function chooseIntents(
  client: Client,
  token: string,
  log: ChannelLogger,
): Promise<boolean> {
  client.rest.setToken(token);
  let flags: number | undefined;
  try {
    const app = (await call(() => client.rest.get(Routes.currentApplication()))) as {
      flags?: number;
    };
    flags = Number(app.flags ?? 0);
  } catch (err) {
    // A refused token fails the login next, with its own error; anything else is said here.
    log.warn(
      { err },
      'discord: could not read the application flags; Message Content not asked for',
    );
  }
  const content = flags !== undefined && messageContentEnabled(flags);
  const bits: number[] = DISCORD_INTENTS.map((i) => i.bit);
  if (content) bits.push(MESSAGE_CONTENT_INTENT.bit);
  else if (flags !== undefined) {
    log.warn(
      { fix: MESSAGE_CONTENT_FIX },
      'discord: the Message Content intent is off: replies to run messages are not seen as guidance',
    );
  }
  client.options.intents = new IntentsBitField(bits);
  return content;
}

/** The parent of a thread channel (cached, else fetched), or null for any other channel. */
async function threadParent(client: Client, channelId: string): Promise<string | null> {
  const channel =
    client.channels.cache.get(channelId) ??
    (await client.channels.fetch(channelId).catch(() => null));
  return channel?.isThread() ? channel.parentId : null;
}

/**
 * A MESSAGE_CREATE's `d` as a guidance Reply (see toGuidanceReply), the bot's mention alone as a
 * bare help Command (toBareMention), a DM's as DirectText, or undefined.
 */
export async function guidanceOfMessage(
  client: Client,
  d: unknown,
): Promise<Reply | DirectText | Command | undefined> {
  const channelId = (d as { channel_id?: unknown } | undefined)?.channel_id;
  if (typeof channelId !== 'string') return undefined;
  if ((d as { guild_id?: unknown }).guild_id === undefined) {
    const facts = messageFactsOf(d, null);
    return facts && toDirectText(facts, client.user?.id);
  }
  const facts = messageFactsOf(d, await threadParent(client, channelId));
  if (facts === undefined) return undefined;
  return toBareMention(facts, client.user?.id) ?? toGuidanceReply(facts, client.user?.id);
}

/** A MESSAGE_UPDATE's `d` as a person's Edit (see toEdit), or undefined. */
export async function editOfMessage(client: Client, d: unknown): Promise<Edit | undefined> {
  const raw = d as { channel_id?: unknown; edited_timestamp?: unknown } | undefined;
  if (typeof raw?.channel_id !== 'string' || typeof raw.edited_timestamp !== 'string') return;
  const facts = messageFactsOf(d, await threadParent(client, raw.channel_id));
  return facts && toEdit(facts, raw.edited_timestamp, client.user?.id);
}

/** What `whisper` needs from the channel. */
export interface WhisperContext {
  readonly client: Client;
  readonly queues: SerialQueues;
  readonly log: ChannelLogger;
}

/** A DM to `user`; rejects when it cannot be sent (DMs closed, no shared server): no fallback. */
export async function directMessage(
  ctx: WhisperContext,
  user: ChatUser,
  text: string,
): Promise<void> {
  const { client, queues } = ctx;
  const content = renderDescriptions(rich(text), 1, MAX_CONTENT - 30)[0] ?? '';
  const dm = (await call(() =>
    client.rest.post(Routes.userChannels(), { body: { recipient_id: user.id } }),
  )) as { id: string };
  await queues.run(dm.id, () =>
    call(() =>
      client.rest.post(Routes.channelMessages(dm.id), {
        body: { content, allowed_mentions: NO_MENTIONS },
      }),
    ),
  );
}

/** A DM to `user`; when their DMs are closed, a short message in the chat pinging them alone. */
export async function whisper(
  ctx: WhisperContext,
  chatRef: string,
  user: ChatUser,
  text: string,
): Promise<void> {
  const { client, queues } = ctx;
  const content = renderDescriptions(rich(text), 1, MAX_CONTENT - 30)[0] ?? '';
  const post = (channelId: string, body: object) =>
    queues.run(channelId, () =>
      call(() => client.rest.post(Routes.channelMessages(channelId), { body })),
    );
  try {
    await directMessage(ctx, user, text);
  } catch (err) {
    ctx.log.info({ err }, 'discord: no DM to the user, telling them in the chat');
    const channelId = channelIdOf(targetOf(chatRef, undefined));
    await post(channelId, {
      content: `<@${user.id}> ${content}`,
      allowed_mentions: { users: [user.id] },
    });
  }
}
