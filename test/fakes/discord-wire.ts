/**
 * Wire objects of the fake Discord: snowflakes, users, channels, guilds and messages shaped as the
 * API sends them (enough fields for discord.js to build its structures), and the API's error body.
 */
import type { APIMessage, APIUser } from 'discord.js';

/** A JSON value. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
/** A JSON object. */
export type JsonObject = { [key: string]: Json };

const DISCORD_EPOCH = 1_420_070_400_000n;
let sequence = 0n;

/** A fresh, increasing snowflake (timestamp bits + a process-wide counter). */
export function snowflake(): string {
  sequence = (sequence + 1n) & 0xfffn;
  return (((BigInt(Date.now()) - DISCORD_EPOCH) << 22n) | sequence).toString();
}

/** The creation time encoded in a snowflake, in ms since the epoch. */
export const snowflakeTime = (id: string): number => Number((BigInt(id) >> 22n) + DISCORD_EPOCH);

/** A user as the API shows it. */
export function wireUser(id: string, username: string, bot = false): APIUser {
  return {
    id,
    username,
    discriminator: '0',
    global_name: bot ? null : username.charAt(0).toUpperCase() + username.slice(1),
    avatar: null,
    ...(bot && { bot: true }),
  };
}

/** A guild member wrapping a user (what interactions in guilds carry). */
export function wireMember(user: APIUser): JsonObject {
  return {
    user: user as unknown as JsonObject,
    roles: [],
    joined_at: new Date(0).toISOString(),
    deaf: false,
    mute: false,
    flags: 0,
    permissions: '2248473465835073',
  };
}

/** A channel of the fake: a guild text channel, a public thread, or a DM. */
export interface FakeChannel {
  readonly id: string;
  readonly kind: 'text' | 'thread' | 'dm';
  readonly guildId?: string;
  readonly parentId?: string;
  readonly name: string;
  /** For DMs: the person at the other end. */
  readonly recipient?: APIUser;
}

/** The channel object the API sends (in GUILD_CREATE and in interactions). */
export function wireChannel(c: FakeChannel): JsonObject {
  if (c.kind === 'dm') {
    return {
      id: c.id,
      type: 1,
      recipients: c.recipient ? [c.recipient as unknown as JsonObject] : [],
      last_message_id: null,
    };
  }
  if (c.kind === 'thread') {
    return {
      id: c.id,
      type: 11,
      guild_id: c.guildId!,
      parent_id: c.parentId!,
      name: c.name,
      owner_id: '1',
      thread_metadata: {
        archived: false,
        auto_archive_duration: 1440,
        archive_timestamp: new Date(0).toISOString(),
        locked: false,
      },
      member_count: 1,
      message_count: 0,
      total_message_sent: 0,
      flags: 0,
      applied_tags: [],
    };
  }
  return {
    id: c.id,
    type: 0,
    guild_id: c.guildId!,
    name: c.name,
    position: 0,
    permission_overwrites: [],
    parent_id: null,
    nsfw: false,
    topic: null,
    last_message_id: null,
    rate_limit_per_user: 0,
    flags: 0,
  };
}

/** A message the fake keeps (posted by the bot, an interaction response or a follow-up). */
export interface StoredMessage {
  id: string;
  channelId: string;
  guildId?: string;
  author: APIUser;
  content: string;
  embeds: JsonObject[];
  components: JsonObject[];
  flags: number;
  createdAt: string;
  editedAt: string | null;
  /** Set for interaction responses and follow-ups. */
  interactionId?: string;
  /** Ephemeral messages are seen by this user only. */
  visibleTo?: string;
  /** `url` and `id` are set for a person's attachments, which the fake's CDN path serves. */
  attachments: { filename: string; size: number; data?: Buffer; id?: string; url?: string }[];
  /** Discord's message type when not 0 (or 20 for interaction responses): 19 for a reply. */
  type?: number;
  /** The message a reply answers. */
  referenceId?: string;
}

/** The message object the API sends for a stored message. */
export function wireMessage(m: StoredMessage, applicationId: string): APIMessage {
  return {
    id: m.id,
    channel_id: m.channelId,
    ...(m.guildId !== undefined && { guild_id: m.guildId }),
    author: m.author,
    content: m.content,
    timestamp: m.createdAt,
    edited_timestamp: m.editedAt,
    tts: false,
    mention_everyone: false,
    mentions: [],
    mention_roles: [],
    attachments: m.attachments.map((a, i) => ({
      id: a.id ?? String(i),
      filename: a.filename,
      size: a.size,
      url: a.url ?? `https://cdn.example/${a.filename}`,
      proxy_url: a.url ?? `https://cdn.example/${a.filename}`,
    })),
    embeds: m.embeds,
    components: m.components,
    pinned: false,
    type: m.type ?? (m.interactionId ? 20 : 0),
    ...(m.referenceId !== undefined && {
      message_reference: {
        type: 0,
        message_id: m.referenceId,
        channel_id: m.channelId,
        ...(m.guildId !== undefined && { guild_id: m.guildId }),
      },
    }),
    flags: m.flags,
    ...(m.interactionId !== undefined && {
      webhook_id: applicationId,
      application_id: applicationId,
    }),
  } as unknown as APIMessage;
}

/** A failure the API reports: HTTP status, Discord error code and message. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: number,
    message: string,
    readonly errors?: JsonObject,
  ) {
    super(message);
  }

  /** The JSON body Discord sends with the failure. */
  body(): JsonObject {
    return { code: this.code, message: this.message, ...(this.errors && { errors: this.errors }) };
  }
}

/** One REST call the fake received. */
export interface RecordedCall {
  readonly method: string;
  /** The path after `/api/v10`, e.g. `/channels/1/messages`. */
  readonly path: string;
  readonly query: Record<string, string>;
  readonly body: JsonObject | undefined;
  readonly files: { name: string; size: number; data?: Buffer }[];
  readonly authorized: boolean;
  status: number;
}
