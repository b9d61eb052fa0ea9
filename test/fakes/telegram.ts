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
import { type FakeTelegramLimits, LimitEnforcer } from './telegram-limits.ts';
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
  TERMINATED_BY_OTHER_POLLER,
  threadOf,
  topicRootMessage,
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
  #updates: Update[] = [];
  #nextUpdateId = 1000;
  #waiters = new Set<() => void>();
  readonly #heldPolls = new Set<() => void>(); // held getUpdates; another poller ends them (409)
  #deliveries: Promise<number>[] = [];
  #failRule:
    | { every: number; retryAfter: number; methods?: Set<string>; count: number }
    | undefined;
  #failNext: { method: string; error: ApiError }[] = [];
  readonly #callWatchers = new Set<() => boolean>();
  readonly #limits: LimitEnforcer | undefined;
  readonly #held = new Set<string>();
  readonly #later: {
    method: string;
    match: (params: Json) => boolean;
    arrive: () => void;
    released: Promise<void>;
  }[] = [];
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

  /** getUpdates requests being held, waiting for an update. */
  get waitingPolls(): number {
    return this.#waiters.size;
  }

  /** The value for grammY's `apiRoot` (no trailing slash). */
  get apiRoot(): string {
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  /** Closes keep-alive connections first (grammY keeps them open), then the server. */
  async close(): Promise<void> {
    for (const wake of this.#waiters) wake();
    this.delivery.close();
    await Promise.allSettled(this.#deliveries);
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  /** Makes every `every`-th call (of `methods`, default all but getUpdates) answer 429. */
  failEvery(every: number, options: { retry_after?: number; methods?: string[] } = {}): void {
    const methods = options.methods ? new Set(options.methods) : undefined;
    this.#failRule = {
      every,
      retryAfter: options.retry_after ?? 0,
      count: 0,
      ...(methods && { methods }),
    };
  }

  /** Applies the next call of `method` but never answers it (the client cannot know it arrived). */
  holdNext(method: string): void {
    this.#held.add(method);
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
    let arrive = () => {};
    let release = () => {};
    const arrived = new Promise<void>((r) => {
      arrive = r;
    });
    const released = new Promise<void>((r) => {
      release = r;
    });
    this.#later.push({ method, match, arrive, released });
    return { arrived, release };
  }

  /** Makes the next call of `method` fail with the given Bot API error. */
  failNext(method: string, code: number, description: string, parameters?: Json): void {
    this.#failNext.push({ method, error: new ApiError(code, description, parameters) });
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
  userSends(o: {
    chat: FakeChat;
    from: FakeUser;
    text: string;
    topic?: number;
    replyTo?: number;
  }): Update {
    this.addChat(o.chat);
    const stored = this.store.store(
      { chat: o.chat, from: o.from, text: o.text, edits: 0 },
      o.topic,
    );
    if (o.replyTo !== undefined) stored.replyToId = o.replyTo;
    const wire = toWireMessage(stored);
    const command = /^\/\S+/.exec(o.text);
    if (command) wire.entities = [{ type: 'bot_command', offset: 0, length: command[0].length }];
    const replied = o.replyTo === undefined ? undefined : this.message(o.chat.id, o.replyTo);
    if (replied) wire.reply_to_message = toWireMessage(replied);
    else if (o.topic !== undefined)
      wire.reply_to_message = topicRootMessage(o.chat, o.topic, o.from);
    return this.pushUpdate({ message: wire });
  }

  /**
   * A user sends a photo or a document with a caption (a leading /command in the caption gets
   * its bot_command caption entity, as Telegram adds it).
   */
  userSendsFile(o: {
    chat: FakeChat;
    from: FakeUser;
    caption: string;
    photo?: Buffer;
    document?: { fileName: string; data: Buffer };
    replyTo?: number;
  }): Update {
    this.addChat(o.chat);
    const stored = this.store.store({ chat: o.chat, from: o.from, edits: 0 }, undefined);
    if (o.replyTo !== undefined) stored.replyToId = o.replyTo;
    const wire = toWireMessage(stored);
    wire.caption = o.caption;
    const command = /^\/\S+/.exec(o.caption);
    if (command) {
      wire.caption_entities = [{ type: 'bot_command', offset: 0, length: command[0].length }];
    }
    if (o.photo) wire.photo = this.files.photoSizes(o.photo);
    if (o.document) {
      const ext = /\.([A-Za-z0-9]+)$/.exec(o.document.fileName)?.[1] ?? 'bin';
      const id = this.files.add(o.document.data, 'documents', ext);
      wire.document = {
        file_id: id,
        file_unique_id: `${id}u`,
        file_name: o.document.fileName,
        file_size: o.document.data.length,
      };
    }
    const replied = o.replyTo === undefined ? undefined : this.message(o.chat.id, o.replyTo);
    if (replied) wire.reply_to_message = toWireMessage(replied);
    return this.pushUpdate({ message: wire });
  }

  /**
   * The author of a message edits its text: an `edited_message` update (with `edit_date`, the
   * bot_command entity again for a leading /command, and its reply, as Telegram sends them).
   */
  userEdits(o: { chatId: number; messageId: number; text: string }): Update {
    const target = this.message(o.chatId, o.messageId);
    if (!target) throw new Error(`no message ${o.chatId}/${o.messageId}`);
    target.text = o.text;
    target.edits += 1;
    const wire = toWireMessage(target);
    wire.edit_date = 1_700_000_000 + target.edits;
    const command = /^\/\S+/.exec(o.text);
    if (command) wire.entities = [{ type: 'bot_command', offset: 0, length: command[0].length }];
    const replied =
      target.replyToId === undefined ? undefined : this.message(o.chatId, target.replyToId);
    if (replied) wire.reply_to_message = toWireMessage(replied);
    return this.pushUpdate({ edited_message: wire });
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
  userPresses(o: { chatId: number; messageId: number; from: FakeUser; label: string }): Update {
    const target = this.message(o.chatId, o.messageId);
    const rows = (target?.replyMarkup?.inline_keyboard ?? []) as Json[][];
    const button = rows.flat().find((b) => b.text === o.label);
    if (!target || !button) throw new Error(`no button "${o.label}" on ${o.chatId}/${o.messageId}`);
    const id = String(4_000_000_000_000 + this.#nextUpdateId);
    this.#callbacks.open(id);
    const query = {
      id,
      from: o.from,
      message: toWireMessage(target),
      chat_instance: `ci${o.chatId}`,
      data: button.callback_data,
    };
    return this.pushUpdate({ callback_query: query });
  }

  /** Queues an update for getUpdates, or POSTs it to the webhook when one is set. */
  pushUpdate(body: Json): Update {
    const update: Update = { update_id: this.#nextUpdateId++, ...body };
    if (this.webhook.url) this.#deliveries.push(this.#deliver(update));
    else this.#updates.push(update);
    for (const wake of this.#waiters) wake();
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
      (u) => this.#updates.push(u),
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
      if (this.#held.delete(method)) return;
      const later = this.#later.findIndex((l) => l.method === method && l.match(params));
      if (later >= 0) {
        const [l] = this.#later.splice(later, 1);
        l!.arrive();
        await l!.released;
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

  #injectedFailure(method: string): ApiError | undefined {
    const i = this.#failNext.findIndex((f) => f.method === method);
    if (i >= 0) return this.#failNext.splice(i, 1)[0]!.error;
    const rule = this.#failRule;
    const counted = rule && (rule.methods ? rule.methods.has(method) : method !== 'getUpdates');
    if (!rule || !counted || ++rule.count % rule.every !== 0) return undefined;
    return new ApiError(429, `Too Many Requests: retry after ${rule.retryAfter}`, {
      retry_after: rule.retryAfter,
    });
  }

  async #dispatch(method: string, p: Json, res: ServerResponse): Promise<unknown> {
    const failure = this.#injectedFailure(method) ?? this.#limits?.admit(method, p);
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
          pending_update_count: this.#updates.length + this.delivery.pending,
          ...this.webhookError,
        };
      case 'deleteWebhook':
        this.webhook = { url: '', secret: undefined };
        if (p.drop_pending_updates) this.#updates = [];
        return true;
      case 'setWebhook': {
        const secret = p.secret_token as string | undefined;
        if (secret !== undefined && !/^[A-Za-z0-9_-]{1,256}$/.test(secret))
          throw bad('secret token contains unallowed characters');
        this.webhook = { url: String(p.url ?? ''), secret };
        for (const u of this.#updates.splice(0)) this.#deliveries.push(this.#deliver(u));
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
      case 'sendDocument': {
        const doc = p.document as { fileName: string; data: Buffer } | undefined;
        if (!doc?.data) throw bad('there is no document in the request');
        const caption =
          p.caption === undefined ? undefined : this.store.visible(p, String(p.caption), 1024);
        return toWireMessage(
          this.store.store(
            {
              chat: this.store.chat(p),
              from: this.bot,
              document: doc,
              ...(caption && { caption }),
              edits: 0,
            },
            threadOf(p),
          ),
        );
      }
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
    const offset = Number(p.offset ?? 0);
    // Asking with an offset confirms (drops) every earlier update, as Telegram does.
    if (offset > 0) this.#updates = this.#updates.filter((u) => u.update_id >= offset);
    // A second poller on the token ends the poll being held, as Telegram does (409).
    for (const end of this.#heldPolls) end();
    const timeoutMs = Number(p.timeout ?? 0) * 1000;
    if (this.#updates.length === 0 && timeoutMs > 0) {
      const ended = await new Promise<boolean>((resolve) => {
        const done = (byOther = false) => {
          clearTimeout(timer);
          this.#waiters.delete(done);
          this.#heldPolls.delete(terminate);
          resolve(byOther);
        };
        const terminate = () => done(true);
        const timer = setTimeout(done, timeoutMs);
        this.#waiters.add(done);
        this.#heldPolls.add(terminate);
        res.once('close', () => done()); // the client gave up (grammY aborts on stop)
      });
      if (ended) throw new ApiError(409, TERMINATED_BY_OTHER_POLLER);
    }
    return this.#updates.slice(0, Number(p.limit ?? 100));
  }
}
