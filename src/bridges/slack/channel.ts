/**
 * The Slack Channel (@slack/bolt): Socket Mode when an app token is set, otherwise HTTP through
 * `handleRequest`, mounted by the shared HTTP server. Every listener (bolt-app.ts) acks first and
 * works after, so Slack always gets its answer within 3 s. Inbound payloads become neutral events
 * (inbound.ts); outbound calls go through one per-conversation queue with 429 retries
 * (../delivery.ts).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { App } from '@slack/bolt';
import { ConfigError, ConflictError, PhasebridgeError, PlatformError } from '../../errors.ts';
import type {
  AnswerOptions,
  Channel,
  ChannelCapabilities,
  ChannelLogger,
  ReasonAsk,
} from '../channel.ts';
import { stderrLogger } from '../channel.ts';
import { DEFAULT_RETRY_POLICY, SerialQueues, withRateLimitRetry } from '../delivery.ts';
import type {
  ChatUser,
  InboundEvent,
  InboundFile,
  InboundHandler,
  Interaction,
} from '../events.ts';
import type { OutgoingFile, OutgoingMessage } from '../messages.ts';
import { createSlackApp, listenForEvents } from './bolt-app.ts';
import { isTooLong, toSlackError } from './errors.ts';
import { downloadSlackFile } from './files.ts';
import type { BotContext } from './inbound.ts';
import { SlackInteractions } from './interactions.ts';
import { DEFAULT_COMMAND, type SlackChannelOptions, validateSlackOptions } from './options.ts';
import {
  formatFileRef,
  formatMessageRef,
  halvePart,
  MAX_ACTION_ID_LENGTH,
  MAX_TEXT_LENGTH,
  parseChatRef,
  parseMessageRef,
  parseThread,
  type RenderedPart,
  renderMessage,
  renderMrkdwn,
  replyThread,
  type SlackChat,
} from './outbound.ts';
import { PressUrls } from './press-urls.ts';
import type { SlackHttpReceiver } from './receiver.ts';
import { responseUrlOrigins } from './response-url.ts';
import { postedWith, sendMetadata } from './sent-lookup.ts';
import { namedEvent, SlackUserNames } from './user-names.ts';

type State = 'idle' | 'starting' | 'running' | 'stopped';

/** How often a part Slack refuses as too long is halved again before giving up. */
const MAX_SPLITS = 4;

/** The Slack implementation of the Channel port. */
export class SlackChannel implements Channel {
  /** Always 'slack'. */
  readonly platform = 'slack' as const;
  /** What Slack supports; long text is split into several messages. */
  readonly capabilities: ChannelCapabilities = {
    edits: true,
    buttons: true,
    threads: true,
    modals: true,
    forceReply: false,
    maxTextLength: MAX_TEXT_LENGTH,
    maxButtonDataBytes: MAX_ACTION_ID_LENGTH,
    privateAnswers: true,
    files: true,
    durableMessages: true,
    replies: true,
  };

  readonly #app: App;
  readonly #receiver: SlackHttpReceiver | undefined;
  readonly #options: SlackChannelOptions;
  readonly #log: ChannelLogger;
  readonly #queues = new SerialQueues();
  readonly #interactions: SlackInteractions;
  /** Recent presses' response_urls: the pressed message's edit goes there (press-urls.ts). */
  readonly #pressUrls: PressUrls;
  #state: State = 'idle';
  #handler: InboundHandler | undefined;
  #bot: BotContext | undefined;
  /** Events being handled, so stop() can wait for them. */
  readonly #inFlight = new Set<Promise<void>>();
  /** Names of people whose events carry their id only (users.info, cached). */
  readonly #names: SlackUserNames;

  /** Validates the options (ConfigError listing every problem) and prepares the Bolt app. */
  constructor(options: SlackChannelOptions) {
    const problems = validateSlackOptions(options);
    if (problems.length > 0) throw new ConfigError(problems);
    this.#options = options;
    this.#log = options.logger ?? stderrLogger;
    const { app, receiver } = createSlackApp(options, this.#log);
    this.#app = app;
    this.#receiver = receiver;
    this.#names = new SlackUserNames(async (user) => {
      const found = await this.#call('users.info', () => this.#app.client.users.info({ user }));
      // The handle, as presses and commands name people (`@bob`); else the profile's names.
      return found.user?.name || found.user?.profile?.display_name || found.user?.real_name;
    });
    const origins = responseUrlOrigins(options.apiUrl);
    this.#pressUrls = new PressUrls(origins, this.#log);
    this.#interactions = new SlackInteractions({
      client: this.#app.client,
      call: (method, run) => this.#call(method, run),
      queue: (channel, work) => this.#queues.run(channel, work),
      origins,
      pressUrls: this.#pressUrls,
      log: this.#log,
      botUserId: () => this.#bot?.botUserId,
      ...(options.state && { state: options.state }),
    });
    this.#listen();
  }

  /** Socket Mode or HTTP, as chosen by the options. */
  get mode(): 'socket' | 'http' {
    return this.#receiver ? 'http' : 'socket';
  }

  #listen(): void {
    listenForEvents(this.#app, {
      bot: () => this.#bot,
      deliver: (event) => this.#deliver(event),
      interactions: this.#interactions,
      pressUrls: this.#pressUrls,
      command: this.#command,
      log: this.#log,
    });
  }

  get #command(): string {
    return this.#options.command ?? DEFAULT_COMMAND;
  }

  async #deliver(unnamed: InboundEvent): Promise<void> {
    const handler = this.#handler;
    if (!handler || this.#state !== 'running') return;
    const event = await namedEvent(this.#names, unnamed);
    const work = handler(event).catch((err: unknown) => {
      this.#log.error(
        { err, kind: event.kind, key: event.idempotencyKey },
        'slack: handler failed',
      );
    });
    this.#inFlight.add(work);
    await work.finally(() => this.#inFlight.delete(work));
  }

  /** Checks the token (auth.test), then connects Socket Mode or starts accepting HTTP requests. */
  async start(handler: InboundHandler): Promise<void> {
    if (this.#state !== 'idle') throw new ConflictError(`slack channel is ${this.#state}`);
    this.#state = 'starting';
    this.#handler = handler;
    try {
      const auth = await this.#call('auth.test', () => this.#app.client.auth.test());
      if (!auth.team_id || !auth.user_id) {
        throw new PlatformError('slack', 'auth.test returned no team or bot user');
      }
      this.#bot = { team: auth.team_id, botUserId: auth.user_id, command: this.#command };
      await this.#app.init();
      await this.#app.start();
      this.#state = 'running';
      this.#log.info({ team: auth.team_id, mode: this.mode }, 'slack: started');
    } catch (err) {
      this.#state = 'idle';
      await this.#app.stop().catch(() => undefined);
      throw toSlackError(err, 'start');
    }
  }

  /** Disconnects (Socket Mode) or refuses further requests, then waits for events being handled. */
  async stop(): Promise<void> {
    if (this.#state === 'stopped' || this.#state === 'idle') return;
    this.#state = 'stopped';
    await this.#app.stop().catch((err: unknown) => {
      this.#log.warn({ err: toSlackError(err, 'stop') }, 'slack: could not disconnect cleanly');
    });
    await Promise.all(this.#inFlight);
  }

  /**
   * HTTP handler for HTTP mode; mount it at `/slack/` (events, commands and interactivity may
   * share one URL). 401 for anything not signed by Slack within ±5 minutes, 503 while not running.
   */
  readonly handleRequest = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (!this.#receiver) {
      res.writeHead(404).end();
    } else if (req.method !== 'POST') {
      res.writeHead(405, { allow: 'POST' }).end();
    } else if (this.#state !== 'running') {
      res.writeHead(503).end();
    } else {
      try {
        await this.#receiver.handle(req, res);
      } catch (err) {
        this.#log.warn({ err }, 'slack: bad request');
        if (!res.headersSent) res.writeHead(400).end();
      }
    }
  };

  /**
   * Posts Block Kit messages (several when the text is longer than one message may carry).
   * `silent` has no Slack equivalent; only mentions ping, and rendered text never carries one.
   */
  async send(chatRef: string, message: OutgoingMessage): Promise<string> {
    const chat = this.#target(chatRef, message.thread, message.replyTo);
    const parts = renderMessage(message);
    return this.#queues.run(chat.channel, async () => {
      const ts: string[] = [];
      for (const part of parts) ts.push(...(await this.#post(chat, part, message.nonce)));
      return formatMessageRef(chat, ts);
    });
  }

  /**
   * The message a send with this nonce made before (a kill between Slack's answer and the
   * outbox's record of it), found by the nonce every post carries in its metadata; undefined
   * when none, or only some of its parts, were posted (then it is sent whole again).
   */
  async findSent(chatRef: string, message: OutgoingMessage): Promise<string | undefined> {
    if (message.nonce === undefined) return undefined;
    const chat = this.#target(chatRef, message.thread, message.replyTo);
    const parts = renderMessage(message).length;
    const ts = await this.#queues.run(chat.channel, () =>
      postedWith(this.#app.client, (m, run) => this.#call(m, run), chat, message.nonce!),
    );
    return ts.length >= parts ? formatMessageRef(chat, ts) : undefined;
  }

  /**
   * Posts one part; when Slack still finds it too long (its limits are partly undocumented), it
   * is split in two and both are posted, so the reader gets all of it, each part once.
   */
  async #post(chat: SlackChat, part: RenderedPart, nonce?: string, depth = 0): Promise<string[]> {
    try {
      const sent = await this.#call('chat.postMessage', () =>
        this.#app.client.chat.postMessage({
          channel: chat.channel,
          text: part.text,
          blocks: part.blocks,
          unfurl_links: false,
          unfurl_media: false,
          ...(chat.thread !== undefined && { thread_ts: chat.thread }),
          // The send's identity, so a restart can find it posted (sent-lookup.ts).
          ...sendMetadata(nonce),
        }),
      );
      if (!sent.ts) throw new PlatformError('slack', 'chat.postMessage returned no ts');
      return [sent.ts];
    } catch (err) {
      if (depth >= MAX_SPLITS || !(err instanceof PhasebridgeError) || !isTooLong(err)) throw err;
      this.#log.info({ err }, 'slack: message too long, splitting it');
      const ts: string[] = [];
      for (const half of halvePart(part))
        ts.push(...(await this.#post(chat, half, nonce, depth + 1)));
      return ts;
    }
  }

  /**
   * chat.update on every part, keeping each ts. An edit cannot add messages, so text needing more
   * parts than were sent is cut short with a marker; parts no longer needed are deleted.
   */
  async edit(messageRef: string, message: OutgoingMessage): Promise<void> {
    const { chat, ts } = parseMessageRef(messageRef);
    const parts = renderMessage(message, ts.length);
    // The pressed message alone: through its press's response_url, outside chat.update's window
    // and the conversation's queue (false: none, or Slack refused it; chat.update then).
    const pressed = ts.length === 1 && parts[0];
    if (pressed && (await this.#pressUrls.replace(chat.channel, ts[0]!, pressed))) return;
    await this.#queues.run(chat.channel, async () => {
      for (const [i, messageTs] of ts.entries()) {
        const part = parts[i];
        if (part === undefined) {
          await this.#call('chat.delete', () =>
            this.#app.client.chat.delete({ channel: chat.channel, ts: messageTs }),
          ).catch((err) =>
            this.#log.warn({ err, messageRef }, 'slack: could not delete surplus part'),
          );
          continue;
        }
        await this.#call('chat.update', () =>
          this.#app.client.chat.update({
            channel: chat.channel,
            ts: messageTs,
            text: part.text,
            blocks: part.blocks,
          }),
        );
      }
    });
  }

  /** True when a recent press on this (one-part) message left a response_url that can replace it. */
  editsViaInteraction(messageRef: string): boolean {
    const { chat, ts } = parseMessageRef(messageRef);
    return ts.length === 1 && this.#pressUrls.usable(chat.channel, ts[0]!) !== undefined;
  }

  /**
   * Private: an ephemeral message only the presser sees (the press's response_url where the bot
   * may not post ephemerals; a message naming the presser once that is spent). Public: a message
   * where the pressed message is (its thread, if any).
   */
  answer(interaction: Interaction, text: string, options: AnswerOptions): Promise<void> {
    return this.#interactions.answer(interaction, text, options);
  }

  /** An ephemeral message only `user` sees, in the chat (and its thread) of `chatRef`. */
  whisper(chatRef: string, user: ChatUser, text: string): Promise<void> {
    return this.#interactions.whisper(parseChatRef(chatRef), user.id, text);
  }

  /**
   * Opens a modal (views.open with the press's trigger_id, which Slack honours for 3 s: call this
   * before slow work). Its submission arrives as a Reply whose replyToMessageRef is the returned ref.
   * Past 3 s the question is asked in the pressed message's thread, and the presser's mention
   * there is the Reply.
   */
  askForReason(interaction: Interaction, prompt: string, ask?: ReasonAsk): Promise<string> {
    return this.#interactions.askForReason(interaction, prompt, ask);
  }

  /** Downloads a file shared with a mention (url_private_download, bot token). */
  downloadFile(file: InboundFile, maxBytes: number): Promise<Uint8Array> {
    return downloadSlackFile(this.#options.botToken, this.#options.apiUrl, file, maxBytes);
  }

  /** Uploads a file (files.uploadV2: get an upload URL, upload, complete into the conversation). */
  async sendFile(chatRef: string, file: OutgoingFile): Promise<string> {
    const chat = this.#target(chatRef, file.thread, file.replyTo);
    const content = {
      file: Buffer.from(file.data),
      filename: file.name,
      ...(file.caption && { initial_comment: renderMrkdwn(file.caption) }),
    };
    const destination =
      chat.thread === undefined
        ? { channel_id: chat.channel }
        : { channel_id: chat.channel, thread_ts: chat.thread };
    return this.#queues.run(chat.channel, async () => {
      const done = await this.#call('files.uploadV2', () =>
        this.#app.client.filesUploadV2({ ...content, ...destination }),
      );
      const fileId = done.files[0]?.files?.[0]?.id;
      if (!fileId) throw new PlatformError('slack', 'files.uploadV2 returned no file id');
      return formatFileRef(chat, fileId);
    });
  }

  /** The chat ref's conversation; its thread is `thread`, else the thread of `replyTo`. */
  #target(chatRef: string, thread: string | undefined, replyTo?: string): SlackChat {
    const chat = parseChatRef(chatRef);
    if (thread !== undefined) return { ...chat, thread: parseThread(thread) };
    return replyTo === undefined ? chat : replyThread(chat, replyTo);
  }

  #call<T>(method: string, call: () => Promise<T>): Promise<T> {
    const policy = this.#options.retry ?? DEFAULT_RETRY_POLICY;
    return withRateLimitRetry(call, {
      toError: (thrown) => toSlackError(thrown, method),
      policy,
      ...(this.#options.onApiCall && { onApiCall: this.#options.onApiCall }),
    });
  }
}
