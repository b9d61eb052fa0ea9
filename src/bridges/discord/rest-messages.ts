/**
 * The bot's messages over REST: a message posted (split over several when the text is long), its
 * parts edited in place (the pressed one through its interaction while that can still update it)
 * and a file uploaded as an attachment. Each call waits its turn in the channel's queue.
 */
import { type APIMessage, type Client, Routes } from 'discord.js';
import type { ChannelLogger } from '../channel.ts';
import type { SerialQueues } from '../delivery.ts';
import type { OutgoingFile, OutgoingMessage } from '../messages.ts';
import { discordCall } from './errors.ts';
import type { LiveInteractions } from './interactions.ts';
import {
  editBody,
  MAX_CONTENT,
  NO_MENTIONS,
  postBody,
  renderDescriptions,
  renderMessage,
} from './outbound.ts';
import { channelIdOf, type DiscordPlace, formatMessageRef, parseMessageRef } from './refs.ts';

/** What posting needs from the channel. */
export interface MessageRestContext {
  readonly client: Client;
  readonly queues: SerialQueues;
  /** Presses that can still be answered by updating their message. */
  readonly live: LiveInteractions;
  readonly log: ChannelLogger;
}

/** Posts the message at `place`, split over several when the text is long (buttons on the last). */
export function postMessage(
  ctx: MessageRestContext,
  place: DiscordPlace,
  message: OutgoingMessage,
): Promise<string> {
  const channelId = channelIdOf(place);
  const parts = renderMessage(message);
  return ctx.queues.run(channelId, async () => {
    const ids: string[] = [];
    for (const [i, part] of parts.entries()) {
      // A split message pings once, for its first part.
      const nonce = message.nonce === undefined ? undefined : `${message.nonce}.${i}`;
      const body = postBody(part, message.silent === true || i > 0, nonce);
      const sent = (await discordCall(() =>
        ctx.client.rest.post(Routes.channelMessages(channelId), { body }),
      )) as APIMessage;
      ids.push(sent.id);
    }
    return formatMessageRef(place, ids);
  });
}

/**
 * Edits every part in place: the pressed copy through its interaction (`update`, which also
 * acknowledges the press) while that is possible, the others with REST. Text needing more parts
 * than were sent is cut short with a marker; parts no longer needed are deleted.
 */
export async function editMessage(
  ctx: MessageRestContext,
  messageRef: string,
  message: OutgoingMessage,
): Promise<void> {
  const { place, messageIds } = parseMessageRef(messageRef);
  const channelId = channelIdOf(place);
  const parts = renderMessage(message, messageIds.length);
  // The pressed message alone: its press's own response, outside the channel's queue (which
  // may hold a call waiting in discord.js's REST queue) and the bot's global limit.
  const pressed = messageIds.length === 1 ? ctx.live.updatableFor(messageIds[0]!) : undefined;
  if (pressed && parts[0] && (await pressed.update(editBody(parts[0])))) return;
  await ctx.queues.run(channelId, async () => {
    for (const [i, id] of messageIds.entries()) {
      const part = parts[i];
      if (part === undefined) {
        await discordCall(() => ctx.client.rest.delete(Routes.channelMessage(channelId, id))).catch(
          (err) => ctx.log.warn({ err, messageRef }, 'discord: could not delete surplus part'),
        );
        continue;
      }
      const body = editBody(part);
      const live = ctx.live.updatableFor(id);
      if (live && (await live.update(body))) continue;
      await discordCall(() =>
        ctx.client.rest.patch(Routes.channelMessage(channelId, id), { body }),
      );
    }
  });
}

/** Uploads a file at `place` as an attachment (multipart), with the caption as the message text. */
export function postFile(
  ctx: MessageRestContext,
  place: DiscordPlace,
  file: OutgoingFile,
): Promise<string> {
  const channelId = channelIdOf(place);
  const content = file.caption && renderDescriptions(file.caption, 1, MAX_CONTENT)[0];
  const body = {
    ...(content && { content }),
    allowed_mentions: NO_MENTIONS,
    attachments: [{ id: 0, filename: file.name }],
  };
  const files = [{ name: file.name, data: Buffer.from(file.data) }];
  return ctx.queues.run(channelId, async () => {
    const sent = (await discordCall(() =>
      ctx.client.rest.post(Routes.channelMessages(channelId), { body, files }),
    )) as APIMessage;
    return formatMessageRef(place, [sent.id]);
  });
}
