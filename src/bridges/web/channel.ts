/**
 * The web console Channel: a local chat page served by phasebridge's own HTTP server. Outbound
 * messages are rendered to escaped HTML, held (in memory, written behind to the `state` store)
 * and pushed to open pages over server-sent events (an edit replaces the message in place);
 * inbound, the page posts commands, button presses and reasons, which become neutral events from
 * the local admin `web:admin`. With bridge.db as `state` and `auth`, messages, reason prompts and
 * sessions survive a restart.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { InputLimits } from '../../chatops/input-files.ts';
import { ConflictError } from '../../errors.ts';
import type { RequestHandler, Route } from '../../http/server.ts';
import type { AnswerOptions, Channel, ChannelCapabilities, ChannelLogger } from '../channel.ts';
import { stderrLogger } from '../channel.ts';
import type { InboundEvent, InboundFile, InboundHandler, Interaction } from '../events.ts';
import type { MessageRef, OutgoingFile, OutgoingMessage } from '../messages.ts';
import { link, rich } from '../render-text.ts';
import { type ChannelStateStore, MemoryChannelState } from '../state.ts';
import { Flash } from './admin-routes.ts';
import type { AdminSource } from './admin-source.ts';
import {
  type ChatAdapterState,
  type ConsoleContext,
  handleConsoleRequest,
  messageEvent,
  type WorkerState,
} from './console-routes.ts';
import { messageNotHeld } from './errors.ts';
import { requireSession } from './guard.ts';
import { FileShelf, type HeldMessage, MessageHistory } from './history.ts';
import { decodeInteraction } from './inbound.ts';
import {
  assertConsoleChat,
  assertMessageRef,
  escapeHtml,
  MAX_WEB_TEXT_LENGTH,
  renderMessageHtml,
} from './outbound.ts';
import { PromptBook } from './prompts.ts';
import type { QueueSource } from './queue-source.ts';
import { RunEvents } from './run-events.ts';
import type { RunsSource } from './runs-source.ts';
import {
  type ConsoleAuthStore,
  consoleLoginUrl,
  SessionStore,
  type SessionStoreOptions,
} from './session.ts';
import { SseHub } from './sse.ts';
import { StateWriter } from './state-writer.ts';
import { UploadShelf } from './uploads.ts';

/** Options of `WebChannel`; all optional. */
export interface WebChannelOptions {
  readonly logger?: ChannelLogger;
  /** Where the runs pages read runs (see `orchestratorRunsSource`); without it they say so. */
  readonly runs?: RunsSource;
  /** What the Access and Audit pages read and change; without it they say so. */
  readonly admin?: AdminSource;
  /** The queue page's source (see QueueSource); without it the page says it is unavailable. */
  readonly queue?: QueueSource;
  readonly sessions?: SessionStoreOptions;
  /** Where login tokens and sessions are kept (bridge.db's `consoleAuth`); default memory. */
  readonly auth?: ConsoleAuthStore;
  /** Where messages and prompts are kept (bridge.db's `channel_state` for 'web'); default memory. */
  readonly state?: ChannelStateStore;
  /** Messages kept for pages that open later; default 500. */
  readonly historyLimit?: number;
  /** Origins accepted for POSTs besides the request's own host (a TLS proxy's public origin). */
  readonly allowedOrigins?: readonly string[];
  /** Mark the session cookie Secure (when the console is reached through https). */
  readonly secureCookies?: boolean;
  /** Serve only requests a trusted proxy says came over https (off loopback; see guard.ts). */
  readonly httpsOnly?: { readonly trustForwardedProto: boolean };
  /** Keep-alive comment interval of the event streams; default 25 s. */
  readonly heartbeatMs?: number;
  /** Caps of files posted with a command or reply (config `inputs`); default 10 MiB, 5. */
  readonly inputLimits?: InputLimits;
}

type State = 'idle' | 'running' | 'stopped';

/** The web console implementation of the Channel port. */
export class WebChannel implements Channel {
  /** Always 'web'. */
  readonly platform = 'web' as const;
  /**
   * The console edits in place, shows buttons, toasts privately, and asks inline for reasons; its
   * messages survive a restart when its `state` store does (bridge.db), not with the default.
   */
  readonly capabilities: ChannelCapabilities;

  readonly #log: ChannelLogger;
  readonly #sessions: SessionStore;
  readonly #writer: StateWriter;
  readonly #history: MessageHistory;
  readonly #files = new FileShelf();
  readonly #uploads: UploadShelf;
  readonly #hub: SseHub;
  readonly #prompts: PromptBook;
  readonly #ctx: ConsoleContext;
  readonly #runEvents: RunEvents;
  readonly #offRuns: () => void;
  readonly #inFlight = new Set<Promise<void>>();
  #restoring: Promise<void> | undefined;
  #state: State = 'idle';
  #handler: InboundHandler | undefined;

  constructor(options: WebChannelOptions = {}) {
    this.#log = options.logger ?? stderrLogger;
    const state = options.state ?? new MemoryChannelState();
    this.capabilities = {
      edits: true,
      buttons: true,
      threads: false,
      modals: false,
      forceReply: true,
      maxTextLength: MAX_WEB_TEXT_LENGTH,
      maxButtonDataBytes: 256,
      privateAnswers: true,
      files: true,
      durableMessages: state.durable,
    };
    this.#uploads = new UploadShelf(options.inputLimits);
    this.#sessions = new SessionStore(options.auth, options.sessions);
    this.#writer = new StateWriter(state, this.#log);
    this.#history = new MessageHistory(this.#writer, options.historyLimit);
    this.#prompts = new PromptBook(this.#writer);
    this.#hub = new SseHub(options.heartbeatMs);
    this.#runEvents = new RunEvents(options.heartbeatMs);
    const runEvents = this.#runEvents;
    this.#offRuns = options.runs?.onRunChange((runId) => runEvents.changed(runId)) ?? (() => {});
    this.#ctx = {
      sessions: this.#sessions,
      allowedOrigins: options.allowedOrigins ?? [],
      secureCookies: options.secureCookies ?? false,
      httpsOnly: options.httpsOnly,
      history: this.#history,
      files: this.#files,
      uploads: this.#uploads,
      hub: this.#hub,
      prompts: this.#prompts,
      runs: options.runs,
      runEvents: this.#runEvents,
      admin: options.admin,
      queue: options.queue,
      flash: new Flash(),
      log: this.#log,
      running: () => this.running,
      chats: () => this.#chats(),
      workers: () => this.#workers(),
      echo: (text) => this.#publish(this.#history.add('user', echoHtml(text), [])),
      emit: (event) => this.#emit(event),
    };
  }

  #chats: () => readonly ChatAdapterState[] = () => [];
  #workers: () => readonly WorkerState[] | null = () => null;

  /** Where the console page reads the registered job workers (the bridge's worker watch). */
  setWorkerStates(states: () => readonly WorkerState[] | null): void {
    this.#workers = states;
  }

  /** Where the console page reads which chat adapters are up (the bridge's adapter supervisor). */
  setChatStates(states: () => readonly ChatAdapterState[]): void {
    this.#chats = states;
  }

  /** The console's route: mount it at `/` (it answers everything other routes do not). */
  readonly route: Route = {
    prefix: '/',
    handler: async (req, res) => {
      await this.#restored();
      await handleConsoleRequest(this.#ctx, req, res);
    },
    onClose: () => {
      this.#hub.closeAll();
      this.#runEvents.closeAll();
    },
  };

  /** True between start() and stop() (the console's readiness probe). */
  get running(): boolean {
    return this.#state === 'running';
  }

  /** A new one-time login token; print it as `loginUrl(base, token)`. */
  createLoginToken(): Promise<string> {
    return this.#sessions.createLoginToken();
  }

  /** `http://127.0.0.1:7717/?token=…`: the link that logs a browser in, once (a new token). */
  async loginUrl(baseUrl: string, token?: string): Promise<string> {
    return consoleLoginUrl(baseUrl, token ?? (await this.createLoginToken()));
  }

  /** Wraps a handler so it answers only with a console session (e.g. `/metrics`). */
  protect(handler: RequestHandler): RequestHandler {
    return async (req: IncomingMessage, res: ServerResponse) => {
      if (await requireSession(this.#ctx, req, res)) await handler(req, res);
    };
  }

  /** Starts delivering posted commands, presses and reasons to `handler`. */
  async start(handler: InboundHandler): Promise<void> {
    if (this.#state !== 'idle') throw new ConflictError(`web channel is ${this.#state}`);
    await this.#restored();
    this.#handler = handler;
    this.#state = 'running';
    this.#log.info({}, 'web: console started');
  }

  /** Refuses further posts, ends the event streams, and waits for events being handled. */
  async stop(): Promise<void> {
    if (this.#state !== 'running') {
      this.#state = 'stopped';
      return;
    }
    this.#state = 'stopped';
    this.#hub.closeAll();
    this.#runEvents.closeAll();
    this.#offRuns();
    await Promise.allSettled(this.#inFlight);
    await this.#writer.flushed();
  }

  /** Brings back what the state store kept from before a restart, once, before first use. */
  #restored(): Promise<void> {
    this.#restoring ??= Promise.all([this.#history.restore(), this.#prompts.restore()]).then(
      () => undefined,
      (err: unknown) => this.#log.error({ err }, 'web: stored console state not restored'),
    );
    return this.#restoring;
  }

  async #emit(event: InboundEvent): Promise<void> {
    const handler = this.#handler;
    if (!handler) return;
    const work = handler(event);
    const tracked = work.then(
      () => undefined,
      () => undefined,
    );
    this.#inFlight.add(tracked);
    try {
      await work;
    } catch (err) {
      this.#log.error({ err, kind: event.kind, key: event.idempotencyKey }, 'web: handler failed');
      throw err;
    } finally {
      this.#inFlight.delete(tracked);
    }
  }

  #publish(held: HeldMessage): void {
    this.#hub.broadcast(messageEvent(held));
  }

  /** Adds the message to the console chat and pushes it to every open page. */
  async send(chatRef: string, message: OutgoingMessage): Promise<MessageRef> {
    assertConsoleChat(chatRef);
    await this.#restored();
    const held = this.#history.add('bridge', renderMessageHtml(message), buttonIds(message));
    this.#publish(held);
    await this.#writer.flushed();
    return held.ref;
  }

  /** Replaces a held message and pushes the new version (NOT_FOUND when no longer held). */
  async edit(messageRef: MessageRef, message: OutgoingMessage): Promise<void> {
    const ref = assertMessageRef(messageRef);
    await this.#restored();
    const held = this.#history.replace(ref, renderMessageHtml(message), buttonIds(message));
    if (!held) throw messageNotHeld(ref);
    this.#publish(held);
    await this.#writer.flushed();
  }

  /** Private: a toast on the presser's page. Public: a message in the console chat. */
  async answer(interaction: Interaction, text: string, options: AnswerOptions): Promise<void> {
    const data = decodeInteraction(interaction);
    if (!options.private) {
      await this.send('web:console', { text: rich(text) });
      return;
    }
    const reached = this.#hub.sendTo(data.s, data.t, { event: 'toast', data: { text } });
    if (reached === 0) this.#log.debug({ session: data.s }, 'web: toast for a closed page dropped');
  }

  /** Shows an inline question on the presser's page; the answer arrives as a Reply to the returned ref. */
  async askForReason(interaction: Interaction, prompt: string): Promise<MessageRef> {
    const data = decodeInteraction(interaction);
    await this.#restored();
    const ref = this.#history.nextRef();
    this.#prompts.add({ ref, sessionId: data.s, tab: data.t, text: prompt, messageRef: data.m });
    this.#hub.sendTo(data.s, data.t, { event: 'prompt', data: { ref, text: prompt } });
    return ref;
  }

  /**
   * The bytes of a file posted with the command or reply being handled (held in memory until
   * that event is handled); INVALID_INPUT over `maxBytes`, NOT_FOUND once it is released.
   */
  async downloadFile(file: InboundFile, maxBytes: number): Promise<Uint8Array> {
    return this.#uploads.read(file, maxBytes);
  }

  /** Keeps the file in memory and posts a message with its download link. */
  async sendFile(chatRef: string, file: OutgoingFile): Promise<MessageRef> {
    assertConsoleChat(chatRef);
    const id = this.#files.add({ name: file.name, data: file.data });
    const size = `${Math.max(1, Math.round(file.data.byteLength / 1024))} KB`;
    const caption = file.caption ? [...file.caption, '\n'] : [];
    return this.send(chatRef, {
      text: rich(...caption, link(file.name, `/files/${id}`), ` (${size})`),
    });
  }
}

function buttonIds(message: OutgoingMessage): string[] {
  return (message.buttons ?? []).map((b) => b.id);
}

function echoHtml(text: string): string {
  return `<div class="text">${escapeHtml(text)}</div>`;
}
