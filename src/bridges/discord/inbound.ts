/**
 * Inbound side of the Discord adapter: the facts of an interaction (who, where) or of a message
 * (MESSAGE_CREATE: replies and thread messages as guidance) and their translation into neutral
 * Command, ButtonPress and Reply values (pure), plus the opaque interaction handle. Idempotency
 * keys are the interaction or message id, which a gateway replay repeats.
 */
import type { BaseInteraction, ChatInputCommandInteraction, User } from 'discord.js';
import { z } from 'zod';
import type {
  ButtonPress,
  ChatUser,
  Command,
  DirectText,
  Edit,
  InboundFile,
  Interaction,
  Reply,
} from '../events.ts';
import { decodeHandle, encodeHandle } from '../interaction-handle.ts';
import { invocationText, type OptionValue, type SlashCommandSpec } from './commands.ts';
import { toInboundFile } from './files.ts';
import { type DiscordPlace, DM_GUILD, formatChatRef, formatMessageRef, reasonRef } from './refs.ts';

/** The person behind an interaction. */
export interface DiscordUserFacts {
  readonly id: string;
  readonly username: string;
  readonly globalName: string | null;
}

/** What every interaction tells: its id, where it happened and who did it. */
export interface InteractionFacts {
  readonly id: string;
  readonly guildId: string | null;
  readonly channelId: string | null;
  /** The parent channel when the interaction happened in a thread. */
  readonly threadParentId: string | null;
  readonly user: DiscordUserFacts;
}

const userFacts = (u: User): DiscordUserFacts => ({
  id: u.id,
  username: u.username,
  globalName: u.globalName,
});

/** Reads the facts off a discord.js interaction (the channel comes from the payload, cached). */
export function factsOf(interaction: BaseInteraction): InteractionFacts {
  const channel = interaction.channel;
  return {
    id: interaction.id,
    guildId: interaction.guildId,
    channelId: interaction.channelId,
    threadParentId: channel?.isThread() ? channel.parentId : null,
    user: userFacts(interaction.user),
  };
}

/** The option values of a slash command invocation, in the order Discord sent them. */
export function optionValuesOf(interaction: ChatInputCommandInteraction): OptionValue[] {
  return interaction.options.data
    .filter((o) => o.value !== undefined && o.value !== null && o.attachment === undefined)
    .map((o) => ({ name: o.name, value: String(o.value) }));
}

/** The attachments given as options (`/run file:`), as neutral files. */
export function attachmentsOf(interaction: ChatInputCommandInteraction): InboundFile[] {
  return interaction.options.data.flatMap((o) =>
    o.attachment
      ? [toInboundFile({ name: o.attachment.name, size: o.attachment.size, url: o.attachment.url })]
      : [],
  );
}

/** Where the interaction happened, or undefined when it was not in a channel. */
export function placeOf(f: InteractionFacts): DiscordPlace | undefined {
  if (f.channelId === null) return undefined;
  const guild = f.guildId ?? DM_GUILD;
  return f.threadParentId !== null
    ? { guild, channel: f.threadParentId, thread: f.channelId }
    : { guild, channel: f.channelId };
}

/** The neutral user; the id is Discord's immutable snowflake, the display name is for humans. */
export function toChatUser(user: DiscordUserFacts): ChatUser {
  return { platform: 'discord', id: user.id, display: user.globalName ?? user.username };
}

/** The idempotency key of an interaction. */
export const keyOf = (f: InteractionFacts): string => `discord:interaction:${f.id}`;

function base(f: InteractionFacts, place: DiscordPlace) {
  return {
    chatRef: formatChatRef(place),
    ...(place.thread !== undefined && { threadRef: place.thread }),
    user: toChatUser(f.user),
    idempotencyKey: keyOf(f),
  };
}

/** A slash command invocation as a Command; `specs` give the argument order. */
export function toCommand(
  f: InteractionFacts,
  name: string,
  values: readonly OptionValue[],
  specs: readonly SlashCommandSpec[],
  files: readonly InboundFile[] = [],
): Command | undefined {
  const place = placeOf(f);
  if (!place) return undefined;
  const spec = specs.find((s) => s.name === name);
  const { args, rawText } = invocationText(name, values, spec);
  return {
    kind: 'command',
    name: name.toLowerCase(),
    args,
    rawText,
    ...base(f, place),
    ...(files.length > 0 && { files }),
    // An application command is always ours; without a guild it came from a DM.
    addressed: true,
    ...(f.guildId === null && { direct: true }),
  };
}

/** What the adapter needs back from an interaction handle. */
export interface InteractionData {
  /** interaction id */
  readonly i: string;
  /** chat ref of the pressed message */
  readonly c: string;
  /** pressed message id */
  readonly m?: string | undefined;
}

const interactionSchema = z.object({
  i: z.string().regex(/^\d{1,20}$/),
  c: z.string().min(1),
  m: z.string().optional(),
});

/** Packs a press into an opaque, serialisable handle (no token: it stays in memory). */
export function encodeInteraction(data: InteractionData): Interaction {
  return encodeHandle('discord', data);
}

/** Unpacks a handle made by `encodeInteraction`; anything else is INVALID_INPUT. */
export function decodeInteraction(interaction: Interaction): InteractionData {
  return decodeHandle(interaction, 'discord', interactionSchema, 'Discord');
}

/** A press on one of our buttons (`customId` is the button's opaque id). */
export function toButtonPress(
  f: InteractionFacts,
  customId: string,
  messageId: string,
): ButtonPress | undefined {
  const place = placeOf(f);
  if (!place) return undefined;
  const chatRef = formatChatRef(place);
  return {
    kind: 'button',
    token: customId,
    messageRef: formatMessageRef(place, [messageId]),
    interaction: encodeInteraction({ i: f.id, c: chatRef, m: messageId }),
    ...base(f, place),
  };
}

/** The reason typed into our modal, as a Reply to the ref `askForReason` returned. */
export function toReply(f: InteractionFacts, pressId: string, text: string): Reply | undefined {
  const place = placeOf(f);
  // An empty text arrives too: only an optional field (an approval's comment) can be empty.
  if (!place) return undefined;
  return {
    kind: 'reply',
    text,
    replyToMessageRef: reasonRef(formatChatRef(place), pressId),
    ...base(f, place),
  };
}

/** The facts of a MESSAGE_CREATE that decide whether it is guidance. */
export interface MessageFacts {
  readonly id: string;
  readonly guildId: string | null;
  readonly channelId: string;
  /** The parent channel when the message was posted in a thread. */
  readonly threadParentId: string | null;
  /** Discord's message type: 0 default, 19 reply. */
  readonly type: number;
  readonly content: string;
  readonly author: DiscordUserFacts;
  /** The author is a bot or a webhook (ourselves included). */
  readonly fromBot: boolean;
  /** The message it replies to (type 19). */
  readonly referenceId: string | null;
  /** Files attached to the message (blank without the Message Content intent), as neutral files. */
  readonly files: readonly InboundFile[];
}

const rawMessageSchema = z.object({
  id: z.string(),
  channel_id: z.string(),
  guild_id: z.string().optional(),
  type: z.number(),
  content: z.string().default(''),
  webhook_id: z.string().optional(),
  author: z.object({
    id: z.string(),
    username: z.string(),
    global_name: z.string().nullish(),
    bot: z.boolean().optional(),
  }),
  message_reference: z.object({ message_id: z.string().optional() }).optional(),
  attachments: z
    .array(z.object({ filename: z.string(), size: z.number(), url: z.string() }))
    .default([]),
});

/** Reads a MESSAGE_CREATE's `d` (undefined when it is not a message); `threadParentId` comes from the cache. */
export function messageFactsOf(
  d: unknown,
  threadParentId: string | null,
): MessageFacts | undefined {
  const parsed = rawMessageSchema.safeParse(d);
  if (!parsed.success) return undefined;
  const m = parsed.data;
  return {
    id: m.id,
    guildId: m.guild_id ?? null,
    channelId: m.channel_id,
    threadParentId,
    type: m.type,
    content: m.content,
    author: {
      id: m.author.id,
      username: m.author.username,
      globalName: m.author.global_name ?? null,
    },
    fromBot: m.author.bot === true || m.webhook_id !== undefined,
    referenceId: m.message_reference?.message_id ?? null,
    files: m.attachments.map((a) => toInboundFile({ name: a.filename, size: a.size, url: a.url })),
  };
}

/** A person's message in a DM with the bot as DirectText; guild messages and bots yield undefined. */
export function toDirectText(m: MessageFacts, botId: string | undefined): DirectText | undefined {
  if (m.fromBot || m.author.id === botId || m.guildId !== null) return undefined;
  const text = m.content.trim();
  if (text === '' || (m.type !== 0 && m.type !== 19)) return undefined;
  return {
    kind: 'text',
    text,
    chatRef: formatChatRef({ guild: DM_GUILD, channel: m.channelId }),
    user: toChatUser(m.author),
    idempotencyKey: `discord:message:${m.id}`,
  };
}

/**
 * A person's edit of their message in a server (MESSAGE_UPDATE with `edited_timestamp`) as an
 * Edit; its first key is the message's (`discord:message:<id>`). Embed unfurls (no edit time),
 * bots and DMs yield undefined.
 */
export function toEdit(
  m: MessageFacts,
  editedAt: string | null,
  botId: string | undefined,
): Edit | undefined {
  if (editedAt === null || m.fromBot || m.author.id === botId || m.guildId === null) return;
  const place: DiscordPlace =
    m.threadParentId === null
      ? { guild: m.guildId, channel: m.channelId }
      : { guild: m.guildId, channel: m.threadParentId, thread: m.channelId };
  return {
    kind: 'edit',
    text: m.content.trim(),
    chatRef: formatChatRef(place),
    ...(place.thread !== undefined && { threadRef: place.thread }),
    user: toChatUser(m.author),
    originalKey: `discord:message:${m.id}`,
    idempotencyKey: `discord:edit:${m.id}:${editedAt}`,
  };
}

/**
 * The bot's mention alone (`@phasebridge`, no words) in a server channel or thread, as a bare
 * `help` Command (a short help, issue 29); anything else is undefined. Discord sends the content
 * of a message that mentions the bot even without the Message Content intent.
 */
export function toBareMention(m: MessageFacts, botId: string | undefined): Command | undefined {
  if (botId === undefined || m.fromBot || m.guildId === null) return undefined;
  if (m.type !== 0 || !new RegExp(`^<@!?${botId}>$`).test(m.content.trim())) return undefined;
  const place: DiscordPlace =
    m.threadParentId === null
      ? { guild: m.guildId, channel: m.channelId }
      : { guild: m.guildId, channel: m.threadParentId, thread: m.channelId };
  return {
    kind: 'command',
    name: 'help',
    args: [],
    rawText: '',
    chatRef: formatChatRef(place),
    ...(place.thread !== undefined && { threadRef: place.thread }),
    user: toChatUser(m.author),
    addressed: true,
    bare: true,
    idempotencyKey: `discord:message:${m.id}`,
  };
}

/**
 * A person's reply to a message (type 19), or a message in a thread, as a Reply to the message
 * replied to, or to the thread's starter message (a thread started from a message has that
 * message's id): guidance when that is a run's status or checkpoint message (chatops decides).
 * Bots and webhooks (ourselves included), DMs, no text nor file (no Message Content intent) and
 * plain channel messages yield undefined. The answer goes where the message was. Its attachments
 * become `Reply.files` (downloaded from Discord's CDN like `/run file:`, files.ts).
 */
export function toGuidanceReply(m: MessageFacts, botId: string | undefined): Reply | undefined {
  if (m.fromBot || m.author.id === botId || m.guildId === null) return undefined;
  const text = m.content.trim();
  // Attachments alone are still the person's reply (without Message Content both are empty).
  if (text === '' && m.files.length === 0) return undefined;
  if (m.type !== 0 && m.type !== 19) return undefined;
  const guild = m.guildId;
  const place: DiscordPlace =
    m.threadParentId === null
      ? { guild, channel: m.channelId }
      : { guild, channel: m.threadParentId, thread: m.channelId };
  let target: string;
  if (m.type === 19 && m.referenceId !== null) target = formatMessageRef(place, [m.referenceId]);
  else if (m.threadParentId !== null)
    target = formatMessageRef({ guild, channel: m.threadParentId }, [m.channelId]);
  else return undefined;
  return {
    kind: 'reply',
    text,
    replyToMessageRef: target,
    chatRef: formatChatRef(place),
    ...(place.thread !== undefined && { threadRef: place.thread }),
    user: toChatUser(m.author),
    ...(m.files.length > 0 && { files: m.files }),
    idempotencyKey: `discord:message:${m.id}`,
  };
}
