/**
 * The Discord Channel (discord.js): a gateway connection with the Guilds, GuildMessages and DirectMessages intents
 * (Message Content too when the application has it enabled: replies as guidance), slash commands
 * per chat verb, embeds with buttons, a modal for reasons, DMs for private words. discord.js
 * reconnects and resumes the gateway, and waits out rate limits (429) on its own per route;
 * limits longer than `maxRateLimitWaitMs` fail with RATE_LIMITED.
 */
import {
  type ButtonInteraction,
  type ChatInputCommandInteraction,
  type Client,
  type Interaction as DiscordInteraction,
  Events,
  type ModalSubmitInteraction,
  Routes,
} from 'discord.js';
import { ConfigError, ConflictError, PlatformError } from '../../errors.ts';
import type {
  AnswerOptions,
  Channel,
  ChannelCapabilities,
  ChannelLogger,
  ReasonAsk,
} from '../channel.ts';
import { stderrLogger } from '../channel.ts';
import { SerialQueues } from '../delivery.ts';
import type {
  ChatUser,
  InboundEvent,
  InboundFile,
  InboundHandler,
  Interaction,
} from '../events.ts';
import type { OutgoingFile, OutgoingMessage, RichText } from '../messages.ts';
import { plainTextOf } from '../render-text.ts';
import { type ChannelStateStore, MemoryChannelState } from '../state.ts';
import { createDiscordClient } from './client.ts';
import { chatopsCommands, type SlashCommandSpec, toRegistrationBody } from './commands.ts';
import { discordCall, toDiscordError } from './errors.ts';
import { downloadDiscordFile } from './files.ts';
import {
  attachmentsOf,
  decodeInteraction,
  factsOf,
  type InteractionData,
  optionValuesOf,
  toButtonPress,
  toCommand,
  toReply,
} from './inbound.ts';
import { LiveInteraction, LiveInteractions, TOKEN_LIFETIME_MS } from './interactions.ts';
import { type DiscordChannelOptions, validateDiscordOptions } from './options.ts';
import {
  commandEcho,
  keptPrompt,
  keptPromptValue,
  MAX_CUSTOM_ID,
  MAX_DESCRIPTION,
  REASON_ID_PREFIX,
  REASON_INPUT_ID,
  reasonModal,
} from './outbound.ts';
import { channelIdOf, parseChatRef, parseMessageRef, reasonRef, targetOf } from './refs.ts';
import {
  chooseIntents,
  directMessage,
  editOfMessage,
  guidanceOfMessage,
  whisper,
} from './replies.ts';
import { editMessage, type MessageRestContext, postFile, postMessage } from './rest-messages.ts';
import { ReplyThreads } from './threads.ts';

type State = 'idle' | 'starting' | 'running' | 'stopped';

/** Key of a reason prompt in the state store, by the id of the press that asked. */
const promptKey = (pressId: string): string => `prompt:${pressId}`;

/** The Discord implementation of the Channel port. */
export class DiscordChannel implements Channel {
  /** Always 'discord'. */
  readonly platform = 'discord' as const;
  /** What Discord supports; long text is split into several messages. */
  readonly capabilities: ChannelCapabilities = {
    edits: true,
    buttons: true,
    threads: true,
    modals: true,
    forceReply: false,
    maxTextLength: MAX_DESCRIPTION,
    maxButtonDataBytes: MAX_CUSTOM_ID,
    privateAnswers: true,
    files: true,
    durableMessages: true,
    replies: true,
    typing: true,
  };

  readonly #client: Client;
  readonly #options: DiscordChannelOptions;
  readonly #log: ChannelLogger;
  readonly #commands: readonly SlashCommandSpec[];
  readonly #queues = new SerialQueues();
  readonly #live = new LiveInteractions();
  readonly #threads: ReplyThreads;
  /** Reason prompts, so the fallback button opens the same modal (also after a restart). */
  readonly #store: ChannelStateStore;
  /** Events being handled, so stop() can wait for them. */
  readonly #inFlight = new Set<Promise<void>>();
  #state: State = 'idle';
  #ready = false;
  #handler: InboundHandler | undefined;

  /** Validates the options (ConfigError listing every problem) and prepares the client. */
  constructor(options: DiscordChannelOptions) {
    const problems = validateDiscordOptions(options);
    if (problems.length > 0) throw new ConfigError(problems);
    this.#options = options;
    this.#log = options.logger ?? stderrLogger;
    this.#commands = options.commands ?? chatopsCommands();
    this.#store = options.state ?? new MemoryChannelState();
    this.#threads = new ReplyThreads(() => this.#client.rest, this.#log);
    this.#client = createDiscordClient(options, this.#log);
    this.#client.on(Events.ClientReady, () => {
      this.#ready = true;
    });
    this.#client.on(Events.InteractionCreate, (i) => {
      if (this.#accepting()) void this.#track(this.#onInteraction(i));
    });
    // Raw, so a message in a thread not yet cached is not dropped; only replies matter here.
    this.#client.on(Events.Raw, (packet: { t?: string; d?: unknown }) => {
      const read =
        packet.t === 'MESSAGE_CREATE'
          ? guidanceOfMessage
          : packet.t === 'MESSAGE_UPDATE'
            ? editOfMessage // never applied; answered when it was for us (issue 29)
            : undefined;
      if (read === undefined || !this.#accepting()) return;
      const work = read(this.#client, packet.d).then((e) => e && this.#deliver(e));
      void this.#track(
        work.catch((err) =>
          this.#log.error({ err: toDiscordError(err) }, 'discord: message failed'),
        ),
      );
    });
  }

  /** Logs in, waits for the guilds, then registers the slash commands. */
  async start(handler: InboundHandler): Promise<void> {
    if (this.#state !== 'idle') throw new ConflictError(`discord channel is ${this.#state}`);
    this.#state = 'starting';
    this.#handler = handler;
    try {
      const ready = new Promise<void>((resolve) =>
        this.#client.once(Events.ClientReady, () => resolve()),
      );
      await chooseIntents(this.#client, this.#options.token, this.#log);
      await this.#client.login(this.#options.token);
      await ready;
      await this.#registerCommands();
      this.#state = 'running';
      this.#log.info({ user: this.#client.user?.id }, 'discord: started');
    } catch (err) {
      this.#state = 'idle';
      this.#ready = false;
      await this.#client.destroy().catch(() => undefined);
      throw toDiscordError(err);
    }
  }

  async #registerCommands(): Promise<void> {
    const appId = this.#client.application?.id;
    if (!appId) throw new PlatformError('discord', 'READY carried no application id');
    const body = toRegistrationBody(this.#commands);
    const guilds = this.#options.guildIds ?? [];
    if (guilds.length === 0) {
      await discordCall(() => this.#client.rest.put(Routes.applicationCommands(appId), { body }));
    }
    for (const guild of guilds) {
      await discordCall(() =>
        this.#client.rest.put(Routes.applicationGuildCommands(appId, guild), { body }),
      );
    }
  }

  /** Stops taking interactions, waits for those being handled, then closes the gateway. */
  async stop(): Promise<void> {
    if (this.#state === 'stopped' || this.#state === 'idle') return;
    this.#state = 'stopped';
    await Promise.all(this.#inFlight);
    await this.#live.clear();
    await this.#client.destroy();
  }

  #accepting(): boolean {
    return this.#ready && this.#handler !== undefined && this.#state !== 'stopped';
  }

  #track(work: Promise<void>): Promise<void> {
    this.#inFlight.add(work);
    return work.finally(() => this.#inFlight.delete(work));
  }

  async #onInteraction(i: DiscordInteraction): Promise<void> {
    try {
      if (i.isChatInputCommand()) await this.#onCommand(i);
      else if (i.isButton() && i.customId.startsWith(REASON_ID_PREFIX)) await this.#openModal(i);
      else if (i.isButton())
        await this.#onAnswerable(i, toButtonPress(factsOf(i), i.customId, i.message.id));
      else if (i.isModalSubmit()) await this.#onAnswerable(i, this.#reasonOf(i));
    } catch (err) {
      this.#log.error(
        { err: toDiscordError(err), interaction: i.id },
        'discord: interaction failed',
      );
    }
  }

  async #onCommand(i: ChatInputCommandInteraction): Promise<void> {
    const event = toCommand(
      factsOf(i),
      i.commandName,
      optionValuesOf(i),
      this.#commands,
      attachmentsOf(i),
    );
    // Answer first, with what was typed: Discord drops a command not answered in 3 s, and the
    // chat then sees who asked for what the bot posts next.
    await i
      .reply({
        content: commandEcho(event?.rawText ?? `/${i.commandName}`),
        allowedMentions: { parse: [] },
      })
      .catch((err: unknown) =>
        this.#log.warn({ err: toDiscordError(err) }, 'discord: could not answer a command'),
      );
    if (event) await this.#deliver(event);
  }

  async #onAnswerable(
    i: ButtonInteraction | ModalSubmitInteraction,
    event: InboundEvent | undefined,
  ): Promise<void> {
    const live = new LiveInteraction(
      i,
      this.#options.ackAfterMs ?? 2000,
      this.#log,
      async (channelId, body) => {
        await this.#queues.run(channelId, () =>
          discordCall(() => this.#client.rest.post(Routes.channelMessages(channelId), { body })),
        );
      },
    );
    this.#live.add(live, Date.now());
    try {
      if (event) await this.#deliver(event);
    } finally {
      await live.finish();
    }
  }

  #reasonOf(i: ModalSubmitInteraction): InboundEvent | undefined {
    if (!i.customId.startsWith(REASON_ID_PREFIX)) return undefined;
    const field = i.fields.fields.get(REASON_INPUT_ID);
    const text = field && 'value' in field && typeof field.value === 'string' ? field.value : '';
    return toReply(factsOf(i), i.customId.slice(REASON_ID_PREFIX.length), text);
  }

  /** The fallback "Give a reason" button: opens the modal the press could not open itself. */
  async #openModal(i: ButtonInteraction): Promise<void> {
    const pressId = i.customId.slice(REASON_ID_PREFIX.length);
    const stored = await this.#store.get(promptKey(pressId)).catch((err: unknown) => {
      this.#log.warn({ err }, 'discord: reason prompt not read');
      return undefined;
    });
    // A modal must open within 3 s of the press: a prompt that cannot be read gets plain words.
    const kept = keptPrompt(stored);
    await i.showModal(reasonModal(pressId, kept.prompt, [], kept.ask));
  }

  async #deliver(event: InboundEvent): Promise<void> {
    try {
      await this.#handler?.(event);
    } catch (err) {
      this.#log.error(
        { err, kind: event.kind, key: event.idempotencyKey },
        'discord: handler failed',
      );
    }
  }

  /** Posts the message (split over several when the text is long); the last part has the buttons. */
  async send(chatRef: string, message: OutgoingMessage): Promise<string> {
    const place = await this.#place(chatRef, message.thread, message.replyTo, message.text);
    return postMessage(this.#rest(), place, message);
  }

  /**
   * Edits every part in place: the pressed copy through its interaction (`update`, which also
   * acknowledges the press) while that is possible, the others with REST. Text needing more parts
   * than were sent is cut short with a marker; parts no longer needed are deleted.
   */
  async edit(messageRef: string, message: OutgoingMessage): Promise<void> {
    await editMessage(this.#rest(), messageRef, message);
  }

  /** True while a press on this (one-part) message can still be answered by updating it. */
  editsViaInteraction(messageRef: string): boolean {
    const { messageIds } = parseMessageRef(messageRef);
    return messageIds.length === 1 && this.#live.updatableFor(messageIds[0]!) !== undefined;
  }

  /** Private: an ephemeral message only the presser sees. Public: a message in the chat. */
  async answer(interaction: Interaction, text: string, options: AnswerOptions): Promise<void> {
    await this.#liveOf(decodeInteraction(interaction)).answer(text, options.private);
  }

  /** A DM to `user`; a short message pinging them alone in the chat when their DMs are closed. */
  async whisper(chatRef: string, user: ChatUser, text: string): Promise<void> {
    await whisper(
      { client: this.#client, queues: this.#queues, log: this.#log },
      chatRef,
      user,
      text,
    );
  }

  /** A DM to `user`; rejects when Discord will not deliver it (never posts in a chat instead). */
  async directMessage(user: ChatUser, text: string): Promise<void> {
    await directMessage({ client: this.#client, queues: this.#queues, log: this.#log }, user, text);
  }

  /** Opens a modal asking the presser for the reason; its submission arrives as a Reply. */
  async askForReason(interaction: Interaction, prompt: string, ask?: ReasonAsk): Promise<string> {
    const data = decodeInteraction(interaction);
    const live = this.#liveOf(data);
    // Kept for the fallback button only: failing to keep it must not cost the modal.
    await this.#store
      .set(promptKey(data.i), keptPromptValue(prompt, ask), TOKEN_LIFETIME_MS)
      .catch((err: unknown) => this.#log.warn({ err }, 'discord: reason prompt not kept'));
    await live.askForReason(prompt, ask);
    return reasonRef(data.c, data.i);
  }

  /** Downloads a `/run file:` attachment or a guidance reply's attachment from Discord's CDN. */
  downloadFile(file: InboundFile, maxBytes: number): Promise<Uint8Array> {
    return downloadDiscordFile(this.#options.apiUrl, file, maxBytes);
  }

  /** Uploads a file as an attachment (multipart), with the caption as the message text. */
  async sendFile(chatRef: string, file: OutgoingFile): Promise<string> {
    const place = await this.#place(chatRef, file.thread, file.replyTo, file.caption ?? []);
    return postFile(this.#rest(), place, file);
  }

  /** Trigger Typing Indicator (shown about 10 s, or until the bot's next message there). */
  async typing(chatRef: string): Promise<void> {
    const channelId = channelIdOf(parseChatRef(chatRef));
    await discordCall(() => this.#client.rest.post(Routes.channelTyping(channelId)));
  }

  /** Where a send goes: `thread` if given, else the thread of `replyTo`, else the chat ref's place. */
  #place(chatRef: string, thread?: string, replyTo?: string, text: RichText = []) {
    if (thread !== undefined || replyTo === undefined) return targetOf(chatRef, thread);
    const name = plainTextOf(text).split('\n')[0] ?? '';
    return this.#threads.placeOf(chatRef, replyTo, name);
  }

  /** What posting, editing and uploading over REST need. */
  #rest(): MessageRestContext {
    return { client: this.#client, queues: this.#queues, live: this.#live, log: this.#log };
  }

  #liveOf(data: InteractionData): LiveInteraction {
    const live = this.#live.get(data.i);
    if (!live) {
      throw new PlatformError(
        'discord',
        `interaction ${data.i} can no longer be answered (older than 15 minutes, or the bridge restarted)`,
      );
    }
    return live;
  }
}
