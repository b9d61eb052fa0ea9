/**
 * A fake Discord: one node:http server serving REST under `/api/v10` and the gateway WebSocket
 * (upgrade on `/gateway`, resumes on `/resume`), JSON without compression. It keeps messages and
 * interactions, checks what Discord checks (message limits, one initial response per interaction
 * within the 3-second window, interaction tokens valid for 15 minutes on a clock tests advance),
 * lets tests inject 429s and failures, drives slash commands, button presses, modal submits and
 * people's messages (MESSAGE_CREATE, as the client's intents allow) through the gateway, and
 * records every REST call.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { APIUser } from 'discord.js';
import { slow } from '../support/slowdown.ts';
import { FakeGateway } from './discord-gateway.ts';
import { modalSubmitData, slashCommandData } from './discord-interaction-data.ts';
import {
  type CallMatch,
  type Injection,
  parseBody,
  rateLimitInjection,
  readAll,
  takeInjection,
} from './discord-requests.ts';
import { type RestContext, route } from './discord-rest.ts';
import { FakeDiscordState, type FakeInteraction } from './discord-store.ts';
import {
  ApiError,
  type FakeChannel,
  type Json,
  type JsonObject,
  type RecordedCall,
  type StoredMessage,
  snowflake,
  wireChannel,
  wireMessage,
} from './discord-wire.ts';

export { INTERACTION_TOKEN_TTL_MS } from './discord-rest.ts';

/** Gateway intent bits and the application flags that allow Message Content. */
const GUILD_MESSAGES = 1 << 9;
const DIRECT_MESSAGES = 1 << 12;
const MESSAGE_CONTENT = 1 << 15;
const MESSAGE_CONTENT_FLAGS = (1 << 18) | (1 << 19);

export type { CallMatch } from './discord-requests.ts';
export type { FakeInteraction } from './discord-store.ts';
export type { FakeChannel, RecordedCall, StoredMessage } from './discord-wire.ts';

/** Options of FakeDiscord.start. */
export interface FakeDiscordOptions {
  token?: string;
  /** HELLO's heartbeat interval; default 41250 ms as Discord's. */
  heartbeatIntervalMs?: number;
  /** Interaction callbacks later than this fail with Unknown interaction; default 3000 ms. */
  ackDeadlineMs?: number;
  /** The application has the Message Content intent enabled; default off, as Discord's. */
  messageContent?: boolean;
}

/** The fake server; start with `FakeDiscord.start()`, always `close()` it. */
export class FakeDiscord {
  /** Every REST call received, in order. */
  readonly calls: RecordedCall[] = [];
  /** Guild, channels, messages, interactions and commands. */
  readonly state = new FakeDiscordState();
  readonly gateway: FakeGateway;
  readonly token: string;
  readonly #server: Server;
  readonly #ackDeadlineMs: number;
  readonly #injections: Injection[] = [];
  #clockOffset = 0;

  private constructor(server: Server, options: FakeDiscordOptions) {
    this.#server = server;
    this.token = options.token ?? 'MTIzNDU2Nzg5MDEyMzQ1Njc4.GfakeX.fake-token-for-tests-0123456789';
    this.#ackDeadlineMs = options.ackDeadlineMs ?? 3000;
    this.state.now = () => Date.now() + this.#clockOffset;
    if (options.messageContent) this.state.applicationFlags |= MESSAGE_CONTENT_FLAGS;
    this.gateway = new FakeGateway({
      token: this.token,
      heartbeatIntervalMs: options.heartbeatIntervalMs ?? 41_250,
      readyPayload: () => ({
        v: 10,
        user: this.state.bot as unknown as Json,
        guilds: [{ id: this.state.guildId, unavailable: true }],
        shard: [0, 1],
        application: { id: this.state.applicationId, flags: this.state.applicationFlags },
      }),
      guildPayloads: () => [this.state.guildPayload()],
      changed: () => undefined,
      // Message Content (1 << 15) needs the application flag, as Discord checks at IDENTIFY.
      intentsAllowed: (intents) =>
        (intents & MESSAGE_CONTENT) === 0 ||
        (this.state.applicationFlags & MESSAGE_CONTENT_FLAGS) !== 0,
    });
  }

  /** Starts on an ephemeral 127.0.0.1 port. */
  static async start(options: FakeDiscordOptions = {}): Promise<FakeDiscord> {
    const server = createServer();
    const fake = new FakeDiscord(server, options);
    server.on('request', (req, res) => void fake.#handle(req, res));
    server.on('upgrade', (req, socket, head) => {
      if ((req.url ?? '').startsWith('/gateway') || (req.url ?? '').startsWith('/resume')) {
        fake.gateway.handleUpgrade(req, socket, head);
      } else {
        socket.destroy();
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    fake.gateway.resumeUrl = `ws://127.0.0.1:${fake.port}/resume`;
    return fake;
  }

  /** The listening port. */
  get port(): number {
    return (this.#server.address() as AddressInfo).port;
  }

  /** The value for discord.js' `rest.api` (the adapter's `apiUrl`). */
  get apiUrl(): string {
    return `http://127.0.0.1:${this.port}/api`;
  }

  /** Closes the gateway, keep-alive connections, then the server. */
  async close(): Promise<void> {
    this.gateway.close();
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  /**
   * Moves the fake's clock forward: interactions age (a callback after 3 s fails with 10062
   * Unknown interaction, a follow-up or `@original` edit after 15 min with 401/50027 Invalid
   * Webhook Token) without the test sleeping.
   */
  advanceClock(ms: number): void {
    this.#clockOffset += ms;
  }

  /** Makes the next matching call answer 429 asking to wait `retryAfterSeconds`. */
  rateLimitNext(
    match: CallMatch,
    retryAfterSeconds: number,
    options: { global?: boolean } = {},
  ): void {
    this.#injections.push(rateLimitInjection(match, retryAfterSeconds, options));
  }

  /** Makes the next matching call fail with this status, Discord error code and message. */
  failNext(match: CallMatch, status: number, code: number, message: string): void {
    this.#injections.push({ match, status, body: { code, message }, headers: {} });
  }

  /** Successful REST calls matching a method and path. */
  okCalls(method: string, path: RegExp): RecordedCall[] {
    return this.calls.filter((c) => c.method === method && path.test(c.path) && c.status < 300);
  }

  /** A slash command typed by `user` in `channel`; option values in the order given. */
  slashCommand(
    user: APIUser,
    channel: FakeChannel,
    name: string,
    options: [string, string][] = [],
    files: { name: string; data: Buffer }[] = [],
  ): FakeInteraction {
    const registered = this.state.globalCommands.find((c) => c.name === name);
    // Attachment options (type 11): the value is the attachment id, its object in `resolved`.
    const attachments = files.map((f) => this.#attach(channel.id, f.name, f.data));
    const data = slashCommandData(registered, name, options, attachments);
    return this.#interact(2, user, channel, data);
  }

  /** Files users attached, by CDN path; `attachmentDownloads` lists the paths fetched. */
  readonly #attachments = new Map<string, Buffer>();
  readonly attachmentDownloads: string[] = [];

  /** Stores an attachment the way Discord's CDN serves it: `/attachments/<channel>/<id>/<name>`. */
  #attach(channelId: string, filename: string, data: Buffer): JsonObject & { id: string } {
    const id = snowflake();
    const path = `/attachments/${channelId}/${id}/${encodeURIComponent(filename)}`;
    this.#attachments.set(path, data);
    const url = `http://127.0.0.1:${this.port}${path}?ex=0&is=0&hm=fake`;
    return { id, filename, size: data.length, url, proxy_url: url };
  }

  /** `user` presses the button with `customId` on a stored message. */
  pressButton(user: APIUser, messageId: string, customId: string): FakeInteraction {
    const message = this.state.messages.get(messageId);
    if (!message) throw new Error(`fake discord: no message ${messageId}`);
    const rows = message.components as { components?: { custom_id?: string }[] }[];
    if (!rows.some((r) => r.components?.some((b) => b.custom_id === customId))) {
      throw new Error(`fake discord: message ${messageId} has no button ${customId}`);
    }
    const channel = this.state.channels.get(message.channelId)!;
    return this.#interact(3, user, channel, { custom_id: customId, component_type: 2 }, message.id);
  }

  /** `user` fills in and submits the modal that `opened` showed; `values` by input custom_id. */
  submitModal(
    user: APIUser,
    opened: FakeInteraction,
    values: Record<string, string>,
  ): FakeInteraction {
    const modal = opened.modal;
    if (!modal) throw new Error(`fake discord: interaction ${opened.id} opened no modal`);
    const data = modalSubmitData(modal, values);
    return this.#interact(5, user, opened.channel, data, opened.messageId);
  }

  /**
   * `user` posts `content` in `channel` (a reply to `replyTo` when given). MESSAGE_CREATE goes to
   * a client that identified with GuildMessages; its content is blank without Message Content,
   * as Discord sends it (no mention of the bot here).
   */
  userMessage(
    user: APIUser,
    channel: FakeChannel,
    content: string,
    o: { replyTo?: string; files?: { name: string; data: Buffer }[] } = {},
  ): StoredMessage {
    // Attached files are served by the fake's CDN path, like a slash command's attachments.
    const attachments = (o.files ?? []).map((f) => {
      const a = this.#attach(channel.id, f.name, f.data);
      return { id: a.id, filename: f.name, size: f.data.length, data: f.data, url: String(a.url) };
    });
    const message = this.state.addMessage(channel.id, {
      author: user,
      content,
      ...(o.replyTo !== undefined && { type: 19, referenceId: o.replyTo }),
      ...(attachments.length > 0 && { attachments }),
    });
    this.redeliver(message);
    return message;
  }

  /**
   * The author edits a person's message: its content changes and MESSAGE_UPDATE (with
   * `edited_timestamp`) goes out as the intents allow, as Discord sends it.
   */
  userEdits(message: StoredMessage, content: string): void {
    message.content = content;
    message.editedAt = new Date(Date.parse(message.createdAt) + 1000 * ++this.#edits).toISOString();
    this.#dispatchMessage('MESSAGE_UPDATE', message);
  }

  #edits = 0;

  /** Dispatches MESSAGE_CREATE for a stored message (again: a replay), as the intents allow. */
  redeliver(message: StoredMessage): void {
    this.#dispatchMessage('MESSAGE_CREATE', message);
  }

  #dispatchMessage(event: 'MESSAGE_CREATE' | 'MESSAGE_UPDATE', message: StoredMessage): void {
    const intents = this.gateway.intents;
    // A DM's MESSAGE_CREATE needs DirectMessages, a guild's GuildMessages.
    const dm = message.guildId === undefined;
    if ((intents & (dm ? DIRECT_MESSAGES : GUILD_MESSAGES)) === 0) return;
    const wire = wireMessage(message, this.state.applicationId) as unknown as JsonObject;
    const d = {
      ...wire,
      // Without Message Content, Discord blanks the text and the attachments alike (not in DMs).
      ...(!dm && (intents & MESSAGE_CONTENT) === 0 && { content: '', attachments: [] }),
      ...(message.guildId !== undefined && { member: { roles: [], joined_at: wire.timestamp } }),
    };
    this.gateway.dispatch(event, d as unknown as Json);
  }

  /** Starts a public thread from a message (its id becomes the thread's), THREAD_CREATE. */
  startThread(messageId: string, name: string): FakeChannel {
    const message = this.state.messages.get(messageId);
    if (!message) throw new Error(`fake discord: no message ${messageId}`);
    const thread: FakeChannel = {
      id: messageId,
      kind: 'thread',
      guildId: this.state.guildId,
      parentId: message.channelId,
      name,
    };
    this.state.channels.set(thread.id, thread);
    this.gateway.dispatch('THREAD_CREATE', {
      ...wireChannel(thread),
      newly_created: true,
    } as unknown as Json);
    return thread;
  }

  /** Drops the gateway connection (abruptly, or with a close code); the client must resume. */
  dropGateway(code?: number): void {
    this.gateway.drop(code);
  }

  /** Polls `probe` until it returns something other than undefined/false. */
  async waitFor<T>(probe: () => T | undefined | false, what: string, timeoutMs = 5000): Promise<T> {
    const deadline = Date.now() + slow(timeoutMs);
    for (;;) {
      const value = probe();
      if (value !== undefined && value !== false) return value;
      if (Date.now() > deadline) throw new Error(`fake discord: timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  #interact(
    type: 2 | 3 | 5,
    user: APIUser,
    channel: FakeChannel,
    data: JsonObject,
    messageId?: string,
  ): FakeInteraction {
    const message = messageId === undefined ? undefined : this.state.messages.get(messageId);
    const { interaction, payload } = this.state.createInteraction(
      type,
      user,
      channel,
      data,
      message,
    );
    this.gateway.dispatch('INTERACTION_CREATE', payload);
    return interaction;
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://fake');
    if (req.method === 'GET' && url.pathname.startsWith('/attachments/')) {
      const data = this.#attachments.get(url.pathname);
      if (data) this.attachmentDownloads.push(url.pathname);
      res.writeHead(data ? 200 : 404, data ? { 'content-length': data.length } : {});
      res.end(data);
      return;
    }
    const raw = await readAll(req);
    const { body, files } = await parseBody(raw, String(req.headers['content-type'] ?? ''));
    const call: RecordedCall = {
      method: req.method ?? 'GET',
      path: url.pathname.replace(/^\/api\/v10/, ''),
      query: Object.fromEntries(url.searchParams),
      body: body as JsonObject | undefined,
      files,
      authorized: req.headers.authorization === `Bot ${this.token}`,
      status: 0,
    };
    this.calls.push(call);
    const reply = (
      status: number,
      json: Json | undefined,
      headers: Record<string, string> = {},
    ) => {
      call.status = status;
      const text = json === undefined ? '' : JSON.stringify(json);
      res
        .writeHead(status, { ...headers, ...(text && { 'content-type': 'application/json' }) })
        .end(text);
    };
    const injected = takeInjection(this.#injections, call.method, call.path);
    if (injected) return reply(injected.status, injected.body, injected.headers);
    if (!url.pathname.startsWith('/api/v10/'))
      return reply(404, { code: 0, message: '404: Not Found' });
    try {
      const ctx: RestContext = {
        state: this.state,
        gatewayUrl: `ws://127.0.0.1:${this.port}/gateway`,
        ackDeadlineMs: this.#ackDeadlineMs,
      };
      const result = route(ctx, { ...call, body });
      reply(result.status, result.body);
    } catch (err) {
      if (err instanceof ApiError) reply(err.status, err.body());
      else reply(500, { code: 0, message: String(err) });
    }
  }
}
