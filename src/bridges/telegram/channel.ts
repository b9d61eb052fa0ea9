/**
 * The Telegram Channel (grammY): long polling by default, webhook mode when a webhook URL is set.
 * Inbound updates become neutral events (inbound.ts); outbound calls go through one per-chat
 * queue with 429 retries (../delivery.ts), so messages to a chat arrive whole and in order.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Bot, InputFile, webhookCallback } from 'grammy';
import type { Update } from 'grammy/types';
import { ConfigError, ConflictError, type PhasebridgeError } from '../../errors.ts';
import type { AnswerOptions, Channel, ChannelCapabilities, ChannelLogger } from '../channel.ts';
import { stderrLogger } from '../channel.ts';
import { isDeclined } from '../declined.ts';
import { DEFAULT_RETRY_POLICY, SerialQueues, withRateLimitRetry } from '../delivery.ts';
import type { ChatUser, InboundFile, InboundHandler, Interaction } from '../events.ts';
import type { OutgoingFile, OutgoingMessage } from '../messages.ts';
import { rich, splitRichTextInto } from '../render-text.ts';
import { isNotModified, pollingFault, toTelegramError } from './errors.ts';
import { downloadTelegramFile } from './files.ts';
import { ALLOWED_UPDATES, type BotIdentity, toInbound } from './inbound.ts';
import { answerPress, askForReason, type PressCalls } from './interactions.ts';
import {
  requestTimeoutSeconds,
  type TelegramChannelOptions,
  validateTelegramOptions,
} from './options.ts';
import {
  formatMessageRef,
  HTML_FORMAT,
  MAX_CALLBACK_DATA_BYTES,
  MAX_CAPTION_LENGTH,
  MAX_TEXT_LENGTH,
  parseChatRef,
  parseMessageRef,
  renderHtml,
  renderMessage,
  sendOptions,
  sendTarget,
} from './outbound.ts';
import { UpdatePoller } from './polling.ts';
import { clearRepeats } from './repeats.ts';
import { AppliedUpdates } from './updates.ts';

type State = 'idle' | 'starting' | 'running' | 'stopped';

/** The Telegram implementation of the Channel port. */
export class TelegramChannel implements Channel {
  /** Always 'telegram'. */
  readonly platform = 'telegram' as const;
  /** What Telegram supports; long text is split into several messages. */
  readonly capabilities: ChannelCapabilities = {
    edits: true,
    buttons: true,
    threads: true,
    modals: false,
    forceReply: true,
    maxTextLength: MAX_TEXT_LENGTH,
    maxButtonDataBytes: MAX_CALLBACK_DATA_BYTES,
    privateAnswers: true,
    files: true,
    durableMessages: true,
    replies: true,
    typing: true,
  };

  readonly #bot: Bot;
  readonly #options: TelegramChannelOptions;
  readonly #log: ChannelLogger;
  readonly #queues = new SerialQueues();
  readonly #webhookCallback:
    | ((req: IncomingMessage, res: ServerResponse) => Promise<void>)
    | undefined;
  /** Callback queries not answered yet; answered automatically once the handler returns. */
  readonly #pendingCallbacks = new Set<string>();
  readonly #applied: AppliedUpdates;
  #state: State = 'idle';
  #handler: InboundHandler | undefined;
  #identity: BotIdentity | undefined;
  #poller: UpdatePoller | undefined;
  #fault: string | undefined;
  /** Events being handled, so stop() can wait for them (webhook calls run concurrently). */
  readonly #inFlight = new Set<Promise<void>>();
  /** What interactions.ts and repeats.ts use of this channel. */
  readonly #calls: PressCalls;

  /** Validates the options (ConfigError listing every problem) and prepares the bot. */
  constructor(options: TelegramChannelOptions) {
    const problems = validateTelegramOptions(options);
    if (problems.length > 0) throw new ConfigError(problems);
    this.#options = options;
    this.#log = options.logger ?? stderrLogger;
    const apiRoot = options.apiRoot?.replace(/\/+$/, '');
    const timeoutSeconds = requestTimeoutSeconds(options);
    this.#bot = new Bot(options.token, {
      client: apiRoot ? { apiRoot, timeoutSeconds } : { timeoutSeconds },
    });
    this.#applied = new AppliedUpdates(options.state, this.#log);
    this.#calls = {
      api: this.#bot.api,
      queues: this.#queues,
      log: this.#log,
      call: (call) => this.#call(call),
      pendingCallbacks: this.#pendingCallbacks,
    };
    this.#bot.use((ctx) =>
      this.#track(this.#applied.once(ctx.update.update_id, () => this.#dispatch(ctx.update))),
    );
    this.#webhookCallback = options.webhook
      ? webhookCallback(this.#bot, 'http', {
          secretToken: options.webhook.secret,
          // Telegram redelivers when a webhook call is slow; answer and finish in the background.
          onTimeout: 'return',
          timeoutMilliseconds: 10_000,
        })
      : undefined;
  }

  /** Checks the token (getMe), registers commands, then polls or registers the webhook. */
  async start(handler: InboundHandler): Promise<void> {
    if (this.#state !== 'idle') throw new ConflictError(`telegram channel is ${this.#state}`);
    this.#state = 'starting';
    this.#handler = handler;
    try {
      const me = await this.#call(() => this.#bot.api.getMe());
      this.#bot.botInfo = me;
      this.#identity = { id: me.id, username: me.username };
      await this.#call(() => this.#bot.api.setMyCommands(this.#options.commands));
      const webhook = this.#options.webhook;
      if (webhook) {
        await this.#call(() =>
          this.#bot.api.setWebhook(webhook.url, {
            secret_token: webhook.secret,
            allowed_updates: ALLOWED_UPDATES,
          }),
        );
      } else {
        // grammY's start did this: getUpdates is refused while a webhook is set.
        await this.#call(() => this.#bot.api.deleteWebhook());
        this.#startPolling();
      }
      this.#state = 'running';
      this.#log.info(
        { bot: me.username, mode: webhook ? 'webhook' : 'polling' },
        'telegram: started',
      );
    } catch (err) {
      this.#state = 'idle';
      this.#identity = undefined;
      throw toTelegramError(err);
    }
  }

  /** Our loop, not grammY's: an update is confirmed only once handled (polling.ts says why). */
  #startPolling(): void {
    this.#poller = new UpdatePoller({
      api: this.#bot.api,
      handle: (update) => this.#bot.handleUpdate(update),
      timeoutSeconds: this.#options.pollingTimeoutSeconds ?? 30,
      log: this.#log,
      ...(this.#options.pollConflictRetryMs !== undefined && {
        conflictRetryMs: this.#options.pollConflictRetryMs,
      }),
      onFatal: (err) => {
        // 401 or 409 after start: polling is dead; say so once.
        if (this.#state === 'stopped') return;
        this.#fault = pollingFault(err);
        this.#log.error({ err: toTelegramError(err) }, `telegram: ${this.#fault}`);
      },
    });
    this.#poller.start();
  }

  /** Set when long polling died after start (409: another poller; 401: token revoked). */
  get fault(): string | undefined {
    return this.#fault;
  }

  /** `https://t.me/<bot>?start=<code>`: Telegram sends `/start <code>`, which pairs. */
  pairingLink(code: string): string | undefined {
    const username = this.#identity?.username;
    return username ? `https://t.me/${username}?start=${encodeURIComponent(code)}` : undefined;
  }

  /**
   * Stops polling (or refuses further webhook calls), then waits for events being handled. An
   * update still in hand is not confirmed to Telegram: if this process dies first, the next
   * poller gets it (polling.ts).
   */
  async stop(): Promise<void> {
    if (this.#state === 'stopped' || this.#state === 'idle') return;
    this.#state = 'stopped';
    await this.#poller?.stop();
    await Promise.all(this.#inFlight);
  }

  /** Webhook updates are taken from setWebhook on (Telegram may deliver before it answers). */
  #accepting(): boolean {
    if (this.#state === 'running') return true;
    return this.#state === 'starting' && this.#identity !== undefined;
  }

  #track(work: Promise<void>): Promise<void> {
    this.#inFlight.add(work);
    return work.finally(() => this.#inFlight.delete(work));
  }

  /**
   * HTTP handler for webhook mode; mount it at the webhook URL's path. Answers 401 without the
   * right X-Telegram-Bot-Api-Secret-Token, 503 while not running (Telegram retries later).
   */
  readonly handleWebhook = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (!this.#webhookCallback) {
      res.writeHead(404).end();
    } else if (req.method !== 'POST') {
      res.writeHead(405, { allow: 'POST' }).end();
    } else if (!this.#accepting()) {
      res.writeHead(503).end();
    } else {
      try {
        await this.#webhookCallback(req, res);
      } catch (err) {
        this.#log.warn({ err }, 'telegram: bad webhook request');
        if (!res.headersSent) res.writeHead(400).end();
      }
    }
  };

  async #dispatch(update: Update): Promise<void> {
    const identity = this.#identity;
    const handler = this.#handler;
    if (!identity || !handler) return;
    const event = toInbound(update, identity);
    if (!event) return;
    const callbackId = update.callback_query?.id;
    if (callbackId !== undefined) this.#pendingCallbacks.add(callbackId);
    try {
      await handler(event);
    } catch (err) {
      if (isDeclined(err)) {
        // Left as it came: the process that leads now answers the press.
        this.#pendingCallbacks.delete(callbackId ?? '');
        throw err;
      }
      this.#log.error(
        { err, kind: event.kind, key: event.idempotencyKey },
        'telegram: handler failed',
      );
    } finally {
      // Stop the button's spinner even if the handler did not answer.
      if (callbackId !== undefined && this.#pendingCallbacks.delete(callbackId)) {
        await this.#call(() => this.#bot.api.answerCallbackQuery(callbackId)).catch((err) =>
          this.#log.warn({ err }, 'telegram: could not answer callback query'),
        );
      }
    }
  }

  /** A message in the user's private chat with the bot (its id is the user's); rejects when blocked or never started. */
  async directMessage(user: ChatUser, text: string): Promise<void> {
    await this.send(`telegram:${user.id}`, { text: rich(text) });
  }

  /** Sends the message, split into several when longer than 4096 characters. */
  async send(chatRef: string, message: OutgoingMessage): Promise<string> {
    const { chat, replyToId } = sendTarget(chatRef, message.thread, message.replyTo);
    const parts = renderMessage(message);
    return this.#queues.run(String(chat.chatId), async () => {
      const ids: number[] = [];
      for (const [i, part] of parts.entries()) {
        const sent = await this.#call(() =>
          this.#bot.api.sendMessage(chat.chatId, part.html, {
            ...sendOptions(chat, part, replyToId),
            // A split message pings once, for its first part.
            disable_notification: message.silent === true || i > 0,
          }),
        );
        ids.push(sent.message_id);
      }
      return formatMessageRef(chat, ids);
    });
  }

  /**
   * Edits every part in place. An edit cannot add messages, so text needing more parts than were
   * sent is cut short with a marker; parts no longer needed are deleted.
   */
  async edit(messageRef: string, message: OutgoingMessage): Promise<void> {
    const { chat, messageIds } = parseMessageRef(messageRef);
    const parts = renderMessage(message, messageIds.length);
    await this.#queues.run(String(chat.chatId), async () => {
      for (const [i, id] of messageIds.entries()) {
        const part = parts[i];
        if (part === undefined) {
          await this.#call(() => this.#bot.api.deleteMessage(chat.chatId, id)).catch((err) =>
            this.#log.warn({ err, messageRef }, 'telegram: could not delete surplus part'),
          );
          continue;
        }
        await this.#call(() =>
          this.#bot.api.editMessageText(chat.chatId, id, part.html, {
            ...HTML_FORMAT,
            // An empty keyboard removes the buttons the message had.
            reply_markup: part.keyboard ?? { inline_keyboard: [] },
          }),
        ).catch((err: PhasebridgeError) => {
          if (!isNotModified(err)) throw err;
        });
      }
    });
  }

  /** Takes the buttons off an earlier copy of a send made again (repeats.ts). */
  clearRepeats(
    sent: string,
    message: OutgoingMessage,
    known: readonly string[],
  ): Promise<string[]> {
    return clearRepeats(this.#calls, sent, message, known);
  }

  /** A private alert or a public reply to a press (interactions.ts). */
  answer(interaction: Interaction, text: string, options: AnswerOptions): Promise<void> {
    return answerPress(this.#calls, interaction, text, options);
  }

  /** Sends a ForceReply prompt mentioning the presser; their reply arrives as a Reply. */
  askForReason(interaction: Interaction, prompt: string): Promise<string> {
    return askForReason(this.#calls, interaction, prompt);
  }

  /** Downloads an attached photo or document (getFile, then the file URL). */
  downloadFile(file: InboundFile, maxBytes: number): Promise<Uint8Array> {
    return downloadTelegramFile(this.#bot.api, this.#options, file, maxBytes);
  }

  /** Uploads a document (sendDocument, multipart). */
  async sendFile(chatRef: string, file: OutgoingFile): Promise<string> {
    const { chat, replyToId } = sendTarget(chatRef, file.thread, file.replyTo);
    const caption = file.caption && splitRichTextInto(file.caption, MAX_CAPTION_LENGTH, 1)[0];
    return this.#queues.run(String(chat.chatId), async () => {
      const sent = await this.#call(() =>
        this.#bot.api.sendDocument(chat.chatId, new InputFile(file.data, file.name), {
          ...sendOptions(chat, undefined, replyToId),
          ...(caption && { caption: renderHtml(caption), parse_mode: 'HTML' as const }),
        }),
      );
      return formatMessageRef(chat, [sent.message_id]);
    });
  }

  /** sendChatAction `typing` (Telegram shows it about 5 s, or until the bot's next message). */
  async typing(chatRef: string): Promise<void> {
    const chat = parseChatRef(chatRef);
    const topic = chat.topic !== undefined ? { message_thread_id: chat.topic } : {};
    await this.#call(() => this.#bot.api.sendChatAction(chat.chatId, 'typing', topic));
  }

  #call<T>(call: () => Promise<T>): Promise<T> {
    const policy = this.#options.retry ?? DEFAULT_RETRY_POLICY;
    return withRateLimitRetry(call, {
      toError: toTelegramError,
      policy,
      ...(this.#options.onApiCall && { onApiCall: this.#options.onApiCall }),
    });
  }
}
