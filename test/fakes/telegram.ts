/**
 * A fake Telegram Bot API server: plain node:http speaking the real protocol at
 * `/bot<token>/<method>`, with per-chat message ids, Telegram's validation (HTML, 4096-character
 * texts, 64-byte callback data), long polling (a second poller gets 409), webhook delivery,
 * chats that refuse the bot (telegram-access.ts), expiring callback queries and a call record.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { FakeCallbackQueries } from './telegram-access.ts';
import { FakeFileStore } from './telegram-files.ts';
import { InjectedAnswers } from './telegram-injections.ts';
import { type FakeTelegramLimits, LimitEnforcer } from './telegram-limits.ts';
import {
  type UserEdit,
  type UserFile,
  type UserPress,
  type UserText,
  userEditedMessage,
  userFileMessage,
  userPressQuery,
  userTextMessage,
} from './telegram-people.ts';
import { PendingUpdates } from './telegram-polling.ts';
import { FakeMessageStore } from './telegram-store.ts';
import { type FakeWebhookOptions, WebhookDelivery } from './telegram-webhook.ts';
import {
  ApiError,
  bad,
  type FakeChat,
  type FakeUser,
  type Json,
  type RecordedCall,
  readParams,
  type StoredMessage,
  toWireMessage,
  type Update,
} from './telegram-wire.ts';

export type { FakeWebhookOptions, WebhookAttempt } from './telegram-webhook.ts';
export type { FakeChat, FakeUser, RecordedCall, StoredMessage } from './telegram-wire.ts';
export { CALLBACK_QUERY_TTL_MS, parseTelegramHtml } from './telegram-wire.ts';

/** Options of FakeTelegram.start. */
export interface FakeTelegramOptions {
  token?: string;
  botUsername?: string;
  /** Listen on this 127.0.0.1 port (a platform that comes up late); default an ephemeral one. */
  port?: number;
  /** Enforce Telegram's rate limits (true: the FAQ's figures), answering 429 over them. */
  limits?: FakeTelegramLimits | true;
  /** The fake's clock (ms): tests move it to expire callback queries without sleeping. */
  now?: () => number;
  /** Webhook delivery: timeout, pause between attempts, attempts per update. */
  webhook?: FakeWebhookOptions;
}

/** The fake server; start with `FakeTelegram.start()`, always `close()` it. */
export class FakeTelegram {
  /** Every call received, in order. */
  readonly calls: RecordedCall[] = [];
  /** Commands set with setMyCommands. */
  commands: Json[] = [];
  /** Current webhook (empty url when none). */
  webhook = { url: '', secret: undefined as string | undefined };
  /** Webhook delivery attempts and their retries (attempts, last error). */
  readonly delivery: WebhookDelivery;
  /** Answers given to callback queries, by query id. */
  readonly callbackAnswers = new Map<string, Json>();
  /** The bot's own user. */
  readonly bot: FakeUser;
  /** Chats and messages. */
  readonly store: FakeMessageStore;
  /** Files users attached (getFile and downloads). */
  readonly files = new FakeFileStore();

  readonly #server: Server;
  readonly #token: string;
  readonly #callbacks: FakeCallbackQueries;
  /** Updates queued for getUpdates and the polls held on them (telegram-polling.ts). */
  readonly #pending = new PendingUpdates();
  #nextUpdateId = 1000;
  #deliveries: Promise<number>[] = [];
  readonly #callWatchers = new Set<() => boolean>();
  readonly #limits: LimitEnforcer | undefined;
  /** Failures, holds and late answers a test asked for (telegram-injections.ts). */
  readonly #injected = new InjectedAnswers();
  /**
   * Called as each request arrives, before it is applied (a test can look at the world then);
   * a returned promise is awaited, so an asynchronous look sees the world of that moment.
   */
  onArrival: ((method: string, params: Json) => void | Promise<void>) | undefined;

  private constructor(server: Server, options: FakeTelegramOptions) {
    this.#server = server;
    this.#limits = options.limits && new LimitEnforcer(options.limits);
    this.#token = options.token ?? '123456:TEST-token_abc';
    this.#callbacks = new FakeCallbackQueries(options.now ?? Date.now);
    this.delivery = new WebhookDelivery(options.webhook ?? {}, options.now ?? Date.now);
    this.bot = {
      id: 123456,
      is_bot: true,
      first_name: 'Phasebridge',
      username: options.botUsername ?? 'phasebridge_bot',
    };
    this.store = new FakeMessageStore(this.bot);
  }

  /** Starts on `options.port`, else an ephemeral 127.0.0.1 port. */
  static async start(options: FakeTelegramOptions = {}): Promise<FakeTelegram> {
    let fake: FakeTelegram | undefined;
    const server = createServer((req, res) => {
      if (fake) void fake.#handle(req, res);
    });
    fake = new FakeTelegram(server, options);
    await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
    return fake;
  }

  /** The bot token the fake accepts. */
  get token(): string {
    return this.#token;
  }

  /** Updates no getUpdates has confirmed yet (the bot confirms one once it handled it). */
  get unconfirmedUpdates(): number {
    return this.#pending.length;
  }

  /** getUpdates requests being held, waiting for an update. */
  get waitingPolls(): number {
    return this.#pending.waitingPolls;
  }

  /** The value for grammY's `apiRoot` (no trailing slash). */
  get apiRoot(): string {
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  /** Closes keep-alive connections first (grammY keeps them open), then the server. */
  async close(): Promise<void> {
    this.#pending.wake();
    this.delivery.close();
    await Promise.allSettled(this.#deliveries);
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  /** Makes every `every`-th call (of `methods`, default all but getUpdates) answer 429. */
  failEvery(every: number, options: { retry_after?: number; methods?: string[] } = {}): void {
    this.#injected.failEvery(every, options);
  }

  /** Applies the next call of `method` but never answers it (the client cannot know it arrived). */
  holdNext(method: string): void {
    this.#injected.holdNext(method);
  }

  /**
   * Applies the next call of `method` that `match` accepts at once, but answers it only once
   * `release` is called: the bot's request in flight while the chat already shows its effect.
   * `arrived` resolves when that call was applied.
   */
  answerLater(
    method: string,
    match: (params: Json) => boolean = () => true,
  ): { arrived: Promise<void>; release: () => void } {
    return this.#injected.answerLater(method, match);
  }

  /** Makes the next call of `method` fail with the given Bot API error. */
  failNext(method: string, code: number, description: string, parameters?: Json): void {
    this.#injected.failNext(method, new ApiError(code, description, parameters));
  }

  /** Resolves once `count` successful calls of `method` have been received. */
  waitForCalls(method: string, count = 1): Promise<RecordedCall[]> {
    return new Promise((resolve) => {
      const check = () => {
        const calls = this.okCalls(method);
        if (calls.length < count) return false;
        resolve(calls);
        return true;
      };
      if (!check()) this.#callWatchers.add(check);
    });
  }

  /** Successful calls of one method, in order. */
  okCalls(method: string): RecordedCall[] {
    return this.calls.filter((c) => c.ok && c.method === method);
  }

  /** A stored message. */
  message(chatId: number, messageId: number): StoredMessage | undefined {
    return this.store.message(chatId, messageId);
  }

  /** Messages the bot sent to a chat that still exist, oldest first. */
  botMessages(chatId: number): StoredMessage[] {
    return this.store.botMessages(chatId);
  }

  /** Makes a chat known (a bot can only post where it has been added). */
  addChat(chat: FakeChat): FakeChat {
    return this.store.addChat(chat);
  }

  /** A user posts text; a leading /command gets its bot_command entity, as Telegram adds it. */
  userSends(o: UserText): Update {
    return this.pushUpdate({ message: userTextMessage(this.store, o) });
  }

  /**
   * A user sends a photo or a document with a caption (a leading /command in the caption gets
   * its bot_command caption entity, as Telegram adds it).
   */
  userSendsFile(o: UserFile): Update {
    return this.pushUpdate({ message: userFileMessage(this.store, this.files, o) });
  }

  /**
   * The author of a message edits its text: an `edited_message` update (with `edit_date`, the
   * bot_command entity again for a leading /command, and its reply, as Telegram sends them).
   */
  userEdits(o: UserEdit): Update {
    return this.pushUpdate({ edited_message: userEditedMessage(this.store, o) });
  }

  /** A user replies to a message (in its topic, if any). */
  userReplies(o: { chatId: number; messageId: number; from: FakeUser; text: string }): Update {
    const target = this.message(o.chatId, o.messageId);
    if (!target) throw new Error(`no message ${o.chatId}/${o.messageId}`);
    return this.userSends({
      chat: target.chat,
      from: o.from,
      text: o.text,
      replyTo: o.messageId,
      ...(target.threadId !== undefined && { topic: target.threadId }),
    });
  }

  /** A user presses the inline button labelled `label` on a bot message. */
  userPresses(o: UserPress): Update {
    const id = String(4_000_000_000_000 + this.#nextUpdateId);
    const query = userPressQuery(this.store, o, id);
    this.#callbacks.open(id);
    return this.pushUpdate({ callback_query: query });
  }

  /** Queues an update for getUpdates, or POSTs it to the webhook when one is set. */
  pushUpdate(body: Json): Update {
    const update: Update = { update_id: this.#nextUpdateId++, ...body };
    if (this.webhook.url) this.#deliveries.push(this.#deliver(update));
    else this.#pending.push(update);
    this.#pending.wake();
    return update;
  }

  /** Waits for every webhook delivery so far; returns their HTTP statuses. */
  webhookStatuses(): Promise<number[]> {
    return Promise.all(this.#deliveries);
  }

  /** What getWebhookInfo reports about the last failed delivery (`last_error_*` fields). */
  get webhookError(): { last_error_date?: number; last_error_message?: string } {
    return this.delivery.lastError;
  }

  set webhookError(error: { last_error_date?: number; last_error_message?: string }) {
    this.delivery.lastError = error;
  }

  #deliver(update: Update): Promise<number> {
    return this.delivery.deliver(
      update,
      () => this.webhook,
      (u) => this.#pending.push(u),
    );
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const pathname = new URL(req.url ?? '/', 'http://x').pathname;
    if (req.method === 'GET' && this.files.serve(pathname, this.#token, res)) return;
    const match = /^\/bot([^/]+)\/([A-Za-z]+)$/.exec(pathname);
    const method = match?.[2] ?? '?';
    let params: Json = {};
    try {
      if (!match) throw new ApiError(404, 'Not Found');
      if (match[1] !== this.#token) throw new ApiError(401, 'Unauthorized');
      params = await readParams(req);
      await this.onArrival?.(method, params);
      const result = await this.#dispatch(method, params, res);
      this.calls.push({ method, params, ok: true, at: Date.now() });
      for (const watcher of this.#callWatchers) if (watcher()) this.#callWatchers.delete(watcher);
      if (this.#injected.takeHold(method)) return;
      const later = this.#injected.takeLater(method, params);
      if (later) {
        later.arrive();
        await later.released;
      }
      if (!res.writableEnded)
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ ok: true, result }));
    } catch (err) {
      const e =
        err instanceof ApiError ? err : new ApiError(500, `Internal Server Error: ${String(err)}`);
      this.calls.push({ method, params, ok: false, errorCode: e.code, at: Date.now() });
      const body = {
        ok: false,
        error_code: e.code,
        description: e.message,
        ...(e.parameters && { parameters: e.parameters }),
      };
      if (!res.writableEnded)
        res.writeHead(e.code, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    }
  }

  async #dispatch(method: string, p: Json, res: ServerResponse): Promise<unknown> {
    const failure = this.#injected.failureFor(method) ?? this.#limits?.admit(method, p);
    if (failure) throw failure;
    switch (method) {
      case 'getMe':
        return {
          ...this.bot,
          can_join_groups: true,
          can_read_all_group_messages: false,
          supports_inline_queries: false,
        };
      case 'setMyCommands':
        for (const c of (p.commands ?? []) as Json[]) {
          if (!/^[a-z0-9_]{1,32}$/.test(String(c.command))) throw bad('BOT_COMMAND_INVALID');
        }
        this.commands = (p.commands ?? []) as Json[];
        return true;
      case 'getWebhookInfo':
        return {
          url: this.webhook.url,
          has_custom_certificate: false,
          pending_update_count: this.#pending.length + this.delivery.pending,
          ...this.webhookError,
        };
      case 'deleteWebhook':
        this.webhook = { url: '', secret: undefined };
        if (p.drop_pending_updates) this.#pending.clear();
        return true;
      case 'setWebhook': {
        const secret = p.secret_token as string | undefined;
        if (secret !== undefined && !/^[A-Za-z0-9_-]{1,256}$/.test(secret))
          throw bad('secret token contains unallowed characters');
        this.webhook = { url: String(p.url ?? ''), secret };
        for (const u of this.#pending.takeAll()) this.#deliveries.push(this.#deliver(u));
        return true;
      }
      case 'getUpdates':
        return this.#getUpdates(p, res);
      case 'sendMessage':
        return toWireMessage(this.store.sendText(p));
      case 'getFile':
        return this.files.getFile(p);
      case 'editMessageText':
      case 'editMessageReplyMarkup':
        return toWireMessage(this.store.edit(method, p));
      case 'deleteMessage':
        this.store.botMessage(p, 'message to delete not found').deleted = true;
        return true;
      case 'sendChatAction': {
        // Checks the chat (and topic) as a send would; the action itself is only recorded (calls).
        const actions = ['typing', 'upload_document', 'upload_photo', 'choose_sticker'];
        if (!actions.includes(String(p.action))) throw bad('wrong parameter action in request');
        this.store.chat(p);
        return true;
      }
      case 'answerCallbackQuery': {
        const id = String(p.callback_query_id);
        this.#callbacks.answer(id);
        if (p.text !== undefined && [...String(p.text)].length > 200) throw bad('MESSAGE_TOO_LONG');
        this.callbackAnswers.set(id, p);
        return true;
      }
      case 'sendDocument':
        return toWireMessage(this.store.sendDocument(p));
      default:
        throw new ApiError(404, 'Not Found: method not found');
    }
  }

  async #getUpdates(p: Json, res: ServerResponse): Promise<Json[]> {
    if (this.webhook.url)
      throw new ApiError(
        409,
        "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first",
      );
    return this.#pending.poll(p, res);
  }
}
