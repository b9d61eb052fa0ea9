/**
 * The Channel port: what phasebridge needs from a chat platform. Each adapter (telegram/, slack/,
 * discord/, web/) implements `Channel`; SDK types never leave the adapter's folder. The
 * platform-neutral values that cross the port are in messages.ts (outward) and events.ts
 * (inward); chatops and notify only ever see the types of these three files.
 */
import type { ChatUser, InboundFile, InboundHandler, Interaction } from './events.ts';
import type { ChatRef, MessageRef, OutgoingFile, OutgoingMessage } from './messages.ts';
import type { Platform } from './refs.ts';

// bench/ imports these with the port (Channel) from this file.
export type { Command } from './events.ts';
export type { Urgency } from './messages.ts';
export type { Platform } from './refs.ts';

/** What a platform can do; callers adapt (e.g. no modals -> askForReason uses a reply prompt). */
export interface ChannelCapabilities {
  readonly edits: boolean;
  readonly buttons: boolean;
  readonly threads: boolean;
  readonly modals: boolean;
  readonly forceReply: boolean;
  /** Longest text one message may carry; longer text is split by the adapter. */
  readonly maxTextLength: number;
  /** Longest button `id` in UTF-8 bytes; longer ids are refused. */
  readonly maxButtonDataBytes: number;
  /** `answer(..., {private: true})` is seen by the presser only. */
  readonly privateAnswers: boolean;
  readonly files: boolean;
  /**
   * Sent messages outlive a restart of the bridge, so their refs and buttons stay usable: they
   * live on the platform, or (web console) in the adapter's `state` store, bridge.db in a bridge.
   * False only for an adapter holding messages in memory (the console built without a store):
   * chatops then re-posts what must stay visible (open checkpoints, status messages).
   */
  readonly durableMessages: boolean;
  /** `OutgoingMessage.replyTo` is honoured (a reply in the message's thread); absent means no. */
  readonly replies?: boolean;
  /** `typing()` shows a "typing…" indicator in the chat for a few seconds; absent means no. */
  readonly typing?: boolean;
}

/** What one platform API call came to; adapters report each call (metrics count them). */
export type ApiCallOutcome = 'ok' | 'rate_limited' | 'error';

/** Receives the outcome of every platform API call an adapter makes, retries included. */
export type ApiCallObserver = (outcome: ApiCallOutcome) => void;

/** How a modal asks for text: its title and field label, and whether the field may stay empty. */
export interface ReasonAsk {
  /** The modal's title and the field's label, e.g. "Approve with comment" / "Comment". */
  readonly title?: string;
  readonly label?: string;
  /** The field may be left empty; the empty answer is delivered as a Reply with text "". */
  readonly optional?: boolean;
}

/** Options of `Channel.answer`. */
export interface AnswerOptions {
  /** Only the presser sees it (a toast/alert/ephemeral); otherwise posted in the chat. */
  readonly private: boolean;
  /**
   * How an answer that has to become a chat message is posted (a public one, or a private one
   * past the platform's window: Telegram's 15 s), when not straight to the platform: the outbox
   * (OutboxChannel sets it), paced with the chat's other calls and keyed (`key`: the pressed
   * message, the presser, the text) so a press redelivered after a restart, or pressed again,
   * finds its answer posted.
   */
  readonly post?: (chatRef: ChatRef, message: OutgoingMessage) => Promise<void>;
}

/** The port every chat adapter implements. Errors are phasebridge errors (RATE_LIMITED, PLATFORM...). */
export interface Channel {
  readonly platform: Platform;
  readonly capabilities: ChannelCapabilities;
  /** Connects and starts delivering inbound events to `handler`; resolves once listening. */
  start(handler: InboundHandler): Promise<void>;
  /** Stops receiving, waits for the event being handled, then resolves. */
  stop(): Promise<void>;
  /** Posts a message and returns its ref; rate limits are waited out, order per chat is kept. */
  send(chatRef: ChatRef, message: OutgoingMessage): Promise<MessageRef>;
  /**
   * As `send`, but resolves once the message is durably queued, not delivered: `delivered`
   * settles with its ref. For the answer to what a person sent, so the next update (a press
   * whose answer Telegram drops after 15 s) is not held while a group's 20 a minute is spent.
   * Paced channels only; callers fall back to `send` (chatops `postReply`).
   */
  post?(chatRef: ChatRef, message: OutgoingMessage): Promise<{ delivered: Promise<MessageRef> }>;
  /**
   * Replaces a sent message's content; buttons not in `message` are removed. Never pings.
   * NOT_FOUND (NotFoundError) when the message no longer exists (deleted in the chat).
   */
  edit(messageRef: MessageRef, message: OutgoingMessage): Promise<void>;
  /**
   * A send handed to the platform before, its answer never recorded (the process died in the
   * call): the message it made, where the platform can be asked (Slack: the send's `nonce` in the
   * message's metadata), so it is not sent again; undefined when none is found.
   */
  findSent?(chatRef: ChatRef, message: OutgoingMessage): Promise<MessageRef | undefined>;
  /**
   * After such a send was made again as `sent`, on a platform that cannot be asked (Telegram):
   * takes the buttons off the earlier copy it may have left, i.e. the bot's messages with buttons
   * between the newest of `known` (every message the bridge knows in that chat) and `sent` that
   * are not among `known`. Returns the refs of those whose text is `message`'s (its repeats).
   */
  clearRepeats?(
    sent: MessageRef,
    message: OutgoingMessage,
    known: readonly MessageRef[],
  ): Promise<MessageRef[]>;
  /**
   * True when an edit of `messageRef` made now would answer a person's press on that message
   * through the press's own response (Discord's interaction callback, Slack's `response_url`),
   * which counts in none of the platform's rate limits: the outbox neither paces nor counts it.
   */
  editsViaInteraction?(messageRef: MessageRef): boolean;
  /** Answers a button press, privately to the presser or publicly in the chat. */
  answer(interaction: Interaction, text: string, options: AnswerOptions): Promise<void>;
  /**
   * Asks the presser for free text (a reply prompt or a modal); returns the prompt message's ref.
   * `ask` titles the modal and may make its field optional (an empty answer still arrives).
   */
  askForReason(interaction: Interaction, prompt: string, ask?: ReasonAsk): Promise<MessageRef>;
  /** Uploads a file into a chat. */
  sendFile(chatRef: ChatRef, file: OutgoingFile): Promise<MessageRef>;
  /**
   * Fetches the bytes of a file a person attached (platforms that carry files). More than
   * `maxBytes` is refused as INVALID_INPUT without reading the rest.
   */
  downloadFile?(file: InboundFile, maxBytes: number): Promise<Uint8Array>;
  /**
   * Sends and edits wait in an outbox paced to the platform's limits, where waiting edits of one
   * message coalesce (latest wins): a caller may queue an edit without waiting for the last one.
   */
  readonly paced?: boolean;
  /** Why the adapter stopped receiving on its own after starting (a revoked token…); /readyz shows it. */
  readonly fault?: string | undefined;
  /**
   * Tells one person something only they see, in or about a chat (Slack: an ephemeral message in
   * the chat or its thread; Discord: a DM). Absent where the platform has no private path for a
   * message that is not a button press: callers then answer in the chat.
   */
  whisper?(chatRef: ChatRef, user: ChatUser, text: string): Promise<void>;
  /**
   * A message in the person's private chat with the bot (Telegram's private chat, a Discord DM),
   * sent at once (never queued); rejects when it cannot be delivered, and never falls back to a
   * chat others read (what it carries may be a credential).
   */
  directMessage?(user: ChatUser, text: string): Promise<void>;
  /**
   * Shows "typing…" in a chat for a few seconds (Telegram about 5 s, Discord about 10 s), where
   * `capabilities.typing`; call again to keep it showing. Best effort, never queued.
   */
  typing?(chatRef: ChatRef): Promise<void>;
  /** A link that opens a chat with the bot and pairs it in one tap, where the platform has one. */
  pairingLink?(code: string): string | undefined;
}

/** The logger adapters use; a pino logger fits. */
export interface ChannelLogger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

// Errors serialise to `{}` by default; keep what a reader of the log needs.
const errorFields = (_key: string, value: unknown): unknown =>
  value instanceof Error ? { name: value.name, message: value.message } : value;

/** Default logger: drops debug/info, writes warnings and errors to stderr as JSON lines. */
export const stderrLogger: ChannelLogger = {
  debug: () => {},
  info: () => {},
  warn: (obj, msg) => console.error(JSON.stringify({ level: 'warn', msg, ...obj }, errorFields)),
  error: (obj, msg) => console.error(JSON.stringify({ level: 'error', msg, ...obj }, errorFields)),
};
