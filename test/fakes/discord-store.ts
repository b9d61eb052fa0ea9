/**
 * State of the fake Discord: the application and its bot, one guild with a text channel and a
 * thread, DM channels, messages, interactions and their responses, registered commands. Also the
 * checks Discord applies to message bodies and modals, and the payloads of INTERACTION_CREATE.
 */

import { randomBytes } from 'node:crypto';
import type { APIUser } from 'discord.js';
import { FakeDiscordAccess } from './discord-access.ts';
import {
  ApiError,
  type FakeChannel,
  type JsonObject,
  type StoredMessage,
  snowflake,
  wireChannel,
  wireMember,
  wireMessage,
  wireUser,
} from './discord-wire.ts';

/** An interaction the fake created, and what the application answered. */
export interface FakeInteraction {
  readonly id: string;
  readonly token: string;
  /** 2 command, 3 component, 5 modal submit. */
  readonly type: 2 | 3 | 5;
  readonly user: APIUser;
  readonly channel: FakeChannel;
  readonly createdAt: number;
  /** The message the pressed button (or the button that opened the modal) was on. */
  readonly messageId?: string;
  readonly customId?: string;
  /** Callbacks in order: `type` 4 message, 5 deferred message, 6 deferred update, 7 update, 9 modal. */
  readonly callbacks: { type: number; data?: JsonObject }[];
  /** The message made by a type 4/5 callback (`@original`). */
  originalMessageId?: string;
  /** The modal a type 9 callback opened. */
  modal?: JsonObject;
  readonly followUps: string[];
}

/** Everything the fake knows. */
export class FakeDiscordState {
  readonly applicationId = snowflake();
  /** The application's flags (`GET /applications/@me`): privileged-intent bits, for `doctor`. */
  applicationFlags = 0;
  readonly bot: APIUser = wireUser(this.applicationId, 'phasebridge', true);
  readonly guildId = snowflake();
  /** The guild's text channel and a public thread under it. */
  readonly text: FakeChannel = {
    id: snowflake(),
    kind: 'text',
    guildId: this.guildId,
    name: 'ops',
  };
  readonly thread: FakeChannel = {
    id: snowflake(),
    kind: 'thread',
    guildId: this.guildId,
    parentId: this.text.id,
    name: 'release',
  };
  readonly channels = new Map<string, FakeChannel>([
    [this.text.id, this.text],
    [this.thread.id, this.thread],
  ]);
  readonly messages = new Map<string, StoredMessage>();
  /** The bot's messages by `<channel>:<nonce>` (posted with enforce_nonce). */
  readonly nonces = new Map<string, string>();
  /** Channels the bot showed "typing…" in (Trigger Typing Indicator), in order. */
  readonly typing: string[] = [];
  /**
   * The bot's permissions in the guild (what its invite granted; `GET /users/@me/guilds`):
   * View Channel, Send Messages, Embed Links, Attach Files, Create Public Threads, Send Messages
   * in Threads, Read Message History. A test removes bits as a server admin would.
   */
  guildPermissions: bigint =
    (1n << 10n) | (1n << 11n) | (1n << 14n) | (1n << 15n) | (1n << 16n) | (1n << 35n) | (1n << 38n);
  /** The bot's permission overwrites per channel, and archived threads. */
  readonly access = new FakeDiscordAccess();
  /** The fake's clock (ms): `FakeDiscord.advanceClock` moves it to age interactions. */
  now: () => number = Date.now;
  readonly interactions = new Map<string, FakeInteraction>();
  /** Global commands (`PUT /applications/{id}/commands`), and per guild. */
  globalCommands: JsonObject[] = [];
  readonly guildCommands = new Map<string, JsonObject[]>();

  /** People by id (for DMs). */
  readonly users = new Map<string, APIUser>();
  /** People whose DMs are closed to the bot (Discord answers 50007). */
  readonly dmsClosed = new Set<string>();

  /** A person (a new snowflake each call). */
  user(username: string): APIUser {
    const user = wireUser(snowflake(), username);
    this.users.set(user.id, user);
    return user;
  }

  /** The DM channel between the bot and `user`, created on first use. */
  dm(user: APIUser): FakeChannel {
    for (const c of this.channels.values())
      if (c.kind === 'dm' && c.recipient?.id === user.id) return c;
    const channel: FakeChannel = {
      id: snowflake(),
      kind: 'dm',
      name: user.username,
      recipient: user,
    };
    this.channels.set(channel.id, channel);
    return channel;
  }

  /** GUILD_CREATE's payload. */
  guildPayload(): JsonObject {
    const threads = [...this.channels.values()].filter((c) => c.kind === 'thread');
    return {
      id: this.guildId,
      name: 'Phasebridge Test',
      icon: null,
      owner_id: '1',
      unavailable: false,
      member_count: 2,
      large: false,
      features: [],
      roles: [],
      emojis: [],
      stickers: [],
      members: [],
      presences: [],
      voice_states: [],
      channels: [wireChannel(this.text)],
      threads: threads.map(wireChannel),
      joined_at: new Date(0).toISOString(),
      preferred_locale: 'en-US',
    };
  }

  /** Stores a message in a channel; 404 Unknown Channel when there is no such channel. */
  addMessage(
    channelId: string,
    fields: Partial<StoredMessage> & { author: APIUser },
  ): StoredMessage {
    const channel = this.channels.get(channelId);
    if (!channel) throw new ApiError(404, 10003, 'Unknown Channel');
    const message: StoredMessage = {
      id: snowflake(),
      channelId,
      ...(channel.guildId !== undefined && { guildId: channel.guildId }),
      content: '',
      embeds: [],
      components: [],
      flags: 0,
      createdAt: new Date().toISOString(),
      editedAt: null,
      attachments: [],
      ...fields,
    };
    this.messages.set(message.id, message);
    return message;
  }

  /** Applies an edit body (content, embeds, components) to a stored message. */
  editMessage(message: StoredMessage, body: JsonObject): StoredMessage {
    checkMessageBody(body);
    if (typeof body.content === 'string') message.content = body.content;
    if (Array.isArray(body.embeds)) message.embeds = body.embeds as JsonObject[];
    if (Array.isArray(body.components)) message.components = body.components as JsonObject[];
    message.editedAt = new Date().toISOString();
    return message;
  }

  /** Messages in a channel that everyone sees, oldest first. */
  channelMessages(channelId: string): StoredMessage[] {
    return [...this.messages.values()].filter(
      (m) => m.channelId === channelId && m.visibleTo === undefined,
    );
  }

  /** Creates an interaction and returns it with its INTERACTION_CREATE payload. */
  createInteraction(
    type: 2 | 3 | 5,
    user: APIUser,
    channel: FakeChannel,
    data: JsonObject,
    message?: StoredMessage,
  ): { interaction: FakeInteraction; payload: JsonObject } {
    const interaction: FakeInteraction = {
      id: snowflake(),
      token: `aW50ZXJhY3Rpb24.${randomBytes(24).toString('base64url')}`,
      type,
      user,
      channel,
      createdAt: this.now(),
      ...(message && { messageId: message.id }),
      ...(typeof data.custom_id === 'string' && { customId: data.custom_id }),
      callbacks: [],
      followUps: [],
    };
    this.interactions.set(interaction.id, interaction);
    const where =
      channel.guildId !== undefined
        ? { guild_id: channel.guildId, member: wireMember(user), guild_locale: 'en-US' }
        : { user };
    const payload = {
      id: interaction.id,
      application_id: this.applicationId,
      type,
      data,
      channel_id: channel.id,
      channel: wireChannel(channel),
      token: interaction.token,
      version: 1,
      app_permissions: '2248473465835073',
      locale: 'en-US',
      entitlements: [],
      authorizing_integration_owners: channel.guildId ? { '0': channel.guildId } : { '1': user.id },
      context: channel.guildId ? 0 : 1,
      attachment_size_limit: 10_485_760,
      ...where,
      ...(message && { message: wireMessage(message, this.applicationId) }),
    };
    return { interaction, payload: payload as unknown as JsonObject };
  }

  /** The interaction whose token this is; 404 Unknown Webhook otherwise. */
  interactionByToken(token: string): FakeInteraction {
    for (const i of this.interactions.values()) if (i.token === token) return i;
    throw new ApiError(404, 10015, 'Unknown Webhook');
  }
}

const invalid = (field: string, problem: string) =>
  new ApiError(400, 50035, 'Invalid Form Body', { [field]: { _errors: [{ message: problem }] } });

/** The limits Discord checks on a message body (content, embeds, buttons). */
export function checkMessageBody(body: JsonObject): void {
  const content = typeof body.content === 'string' ? body.content : '';
  if (content.length > 2000) throw invalid('content', 'Must be 2000 or fewer in length.');
  const embeds = Array.isArray(body.embeds) ? (body.embeds as JsonObject[]) : [];
  if (embeds.length > 10) throw invalid('embeds', 'Must be 10 or fewer in length.');
  for (const e of embeds) {
    const description = typeof e.description === 'string' ? e.description : '';
    if (description.length > 4096) throw invalid('embeds.description', 'Must be 4096 or fewer.');
    const fields = Array.isArray(e.fields) ? (e.fields as JsonObject[]) : [];
    if (fields.length > 25) throw invalid('embeds.fields', 'Must be 25 or fewer in length.');
    const total =
      description.length +
      fields.reduce((n, f) => n + String(f.name).length + String(f.value).length, 0);
    if (total > 6000) throw invalid('embeds', 'Embed size exceeds maximum size of 6000');
  }
  const rows = Array.isArray(body.components) ? (body.components as JsonObject[]) : [];
  if (rows.length > 5) throw invalid('components', 'Must be 5 or fewer in length.');
  for (const row of rows) {
    const buttons = Array.isArray(row.components) ? (row.components as JsonObject[]) : [];
    if (row.type !== 1 || buttons.length < 1 || buttons.length > 5) {
      throw invalid('components', 'An action row holds 1-5 components.');
    }
    for (const b of buttons) {
      const id = typeof b.custom_id === 'string' ? b.custom_id : '';
      if (b.type !== 2 || id.length < 1 || id.length > 100) {
        throw invalid('components.custom_id', 'Must be between 1 and 100 in length.');
      }
      if (typeof b.label !== 'string' || b.label.length > 80) {
        throw invalid('components.label', 'Must be 80 or fewer in length.');
      }
    }
  }
  if (
    content === '' &&
    embeds.length === 0 &&
    !('attachments' in body) &&
    !('components' in body)
  ) {
    throw new ApiError(400, 50006, 'Cannot send an empty message');
  }
}

/** The limits Discord checks on a modal. */
export function checkModal(data: JsonObject | undefined): void {
  const title = typeof data?.title === 'string' ? data.title : '';
  const id = typeof data?.custom_id === 'string' ? data.custom_id : '';
  const components = Array.isArray(data?.components) ? data.components : [];
  if (title.length < 1 || title.length > 45) throw invalid('data.title', 'Must be 1-45 in length.');
  if (id.length < 1 || id.length > 100) throw invalid('data.custom_id', 'Must be 1-100 in length.');
  if (components.length < 1 || components.length > 5) {
    throw invalid('data.components', 'Must be 1-5 in length.');
  }
}
