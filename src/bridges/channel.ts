/**
 * The Channel port: what phasebridge needs from a chat platform, and the platform-neutral values
 * that cross it. Each adapter (telegram/, slack/, discord/, web/) implements `Channel`; SDK types
 * never leave the adapter's folder. Chatops and notify only ever see the types in this file.
 */

import type { Platform } from './refs.ts';

export type { Platform } from './refs.ts';

/** One run of formatted text; adapters escape `text` themselves, callers never pre-escape. */
export type RichSegment =
  | { readonly kind: 'plain'; readonly text: string }
  | { readonly kind: 'bold'; readonly text: string }
  | { readonly kind: 'code'; readonly text: string }
  | { readonly kind: 'link'; readonly text: string; readonly url: string }
  /**
   * A person: `text` is their name; the adapter of `platform` shows its own mention of `id`
   * instead (Slack `<@U123>`, Discord `<@123>`), every other place the name (issue 29).
   */
  | {
      readonly kind: 'mention';
      readonly text: string;
      readonly platform: string;
      readonly id: string;
    };

/** Formatted text as a list of segments (build it with the helpers in `render-text.ts`). */
export type RichText = readonly RichSegment[];

/** A labelled value shown under the text (run id, phase, who started it...). */
export interface MessageField {
  readonly label: string;
  /** The value as plain text (what every renderer without rich fields shows). */
  readonly value: string;
  /**
   * The value as rich text when it names people (issue 29: mentions in the Votes and Notes
   * lines); its plain text is `value`. Adapters render it as they render message text.
   */
  readonly rich?: RichText;
}

/** How a button looks; platforms without styles ignore it. */
export type ButtonStyle = 'primary' | 'danger' | 'default';

/** A button; `id` is an opaque token handed back verbatim in `ButtonPress.token`. */
export interface MessageButton {
  readonly id: string;
  readonly label: string;
  readonly style?: ButtonStyle;
}

/**
 * How soon a message must go out when a platform's rate limits make calls wait: first what a
 * person just asked for and waits to see (`interactive`: the edit of a pressed checkpoint, the
 * reply to a command; it may use a chat's short burst), then a checkpoint or a decision, then a
 * notice (a run's end), then a status edit.
 */
export type Urgency = 'interactive' | 'decision' | 'notice' | 'status';

/** A platform-neutral outgoing message; each adapter renders it in its own markup. */
export interface OutgoingMessage {
  readonly text: RichText;
  readonly fields?: readonly MessageField[];
  readonly buttons?: readonly MessageButton[];
  /** Thread to post in; overrides a thread already named in the chat ref. */
  readonly thread?: string;
  /**
   * Post in the thread of this message (one this channel sent to the same chat), where
   * `capabilities.replies`: Slack's thread under it, Telegram's reply chain (in its topic),
   * Discord's thread opened on it (or the thread it is in). Elsewhere it is ignored.
   */
  readonly replyTo?: MessageRef;
  /** Deliver without a notification sound/ping where the platform supports it. */
  readonly silent?: boolean;
  /** Queue order under rate limits (default: `notice` for a send, `status` for an edit). */
  readonly urgency?: Urgency;
  /**
   * The row that asked for this call, told the result in the outbox's confirming transaction
   * (so a send delivered by the next process still reaches it). Adapters ignore it.
   */
  readonly owner?: MessageOwner;
  /**
   * What a send is about (e.g. `answer:<run>:<step>:<attempt>`): a second send with the same key
   * to the same chat is answered with the first one's message instead of being sent again.
   */
  readonly key?: string;
  /**
   * The send's own identity, stored with its outbox row (so a resend after a restart carries the
   * same one). A platform that deduplicates by it (Discord's `nonce` with `enforce_nonce`)
   * answers a resend with the message it already made; others ignore it.
   */
  readonly nonce?: string;
}

/**
 * Who waits for a call's result in bridge.db: a checkpoint copy (`checkpoint_messages`, also
 * tool approvals) or a session offer copy (`session_offers`) takes the sent message's id; a
 * status message (`status_messages`) is recorded; `decision` marks a checkpoint copy's message
 * as showing its decision (an edit or a re-post), `offerClosed` a session offer copy's.
 */
export type MessageOwner =
  | { readonly kind: 'checkpoint'; readonly id: number }
  | { readonly kind: 'offer'; readonly id: number }
  | { readonly kind: 'status'; readonly runId: string; readonly chatRef: string }
  | { readonly kind: 'decision'; readonly id: number }
  | { readonly kind: 'offerClosed'; readonly id: number };

/** A file to upload (logs, long reports). */
export interface OutgoingFile {
  readonly name: string;
  readonly data: Uint8Array;
  readonly caption?: RichText;
  readonly thread?: string;
  /** As `OutgoingMessage.replyTo`. */
  readonly replyTo?: MessageRef;
}

/**
 * Where a message goes: `telegram:<chat>[:<topic>]`, `slack:<team>:<channel>[:<thread>]`,
 * `discord:<guild>:<channel>[:<thread>]`, `web:<session>` (parsed by refs.ts). Safe to store.
 */
export type ChatRef = string;

/** Opaque, storable handle of a message this channel sent; only its adapter parses it. */
export type MessageRef = string;

/** A person on a platform; `id` is the platform's immutable id, `display` is for humans only. */
export interface ChatUser {
  readonly platform: Platform;
  readonly id: string;
  readonly display: string;
}

/** Opaque handle of one button press, for `answer()` and `askForReason()`; short-lived. */
export interface Interaction {
  readonly platform: Platform;
  /** Adapter-private, serialisable data; never parse it outside the adapter. */
  readonly handle: string;
}

/**
 * A file a person attached to a command or a reply (a photo, a document). Only metadata: the
 * bytes are fetched with `Channel.downloadFile`, after the command was authorised.
 */
export interface InboundFile {
  /** The file name as sent (untrusted; sanitised before it is written anywhere). */
  readonly name: string;
  /** Size in bytes as the platform announced it, when it did. */
  readonly size?: number;
  /** Adapter-private, serialisable locator (a file id, a URL); never parse it outside. */
  readonly handle: string;
}

/** A user typed a bot command (`/run add-login`). */
export interface Command {
  readonly kind: 'command';
  /** Lower-case verb without the slash or bot mention. */
  readonly name: string;
  /** Whitespace-separated words after the verb; re-parse `rawText` for quoting rules. */
  readonly args: readonly string[];
  readonly rawText: string;
  /** Where replies go; includes the thread when there is one. */
  readonly chatRef: ChatRef;
  /** The thread alone, when sent in one; `parseChatRef(chatRef).chat` (refs.ts) is its parent. */
  readonly threadRef?: string;
  readonly user: ChatUser;
  /** Text of the message the command replied to, if any. */
  readonly replyToText?: string;
  /** Files attached to the command's message (photos, documents), oldest first. */
  readonly files?: readonly InboundFile[];
  /** Sent in a private chat with the bot (a Telegram private chat, a Slack or Discord DM). */
  readonly direct?: boolean;
  /**
   * Unmistakably for this bot (`/cmd@ourbot`, our Slack slash command or mention, a Discord
   * application command), not a command another bot in a group might own.
   */
  readonly addressed?: boolean;
  /** Derived from the platform's own unique id of this event; a redelivery carries the same key. */
  readonly idempotencyKey: string;
  /**
   * The chat whose binding and roles decide what the user may do, when it is not the chat the
   * event came from (a console session signed in through that chat); answers still go to chatRef.
   */
  readonly accessChat?: AccessChat;
  /** The bot's mention alone, no words (`help` then answers with a short help, issue 29). */
  readonly bare?: boolean;
}

/** A chat (and thread) whose binding and roles apply to an event from elsewhere (the console). */
export interface AccessChat {
  readonly chatRef: ChatRef;
  readonly threadRef?: string;
}

/** A user pressed one of our buttons. */
export interface ButtonPress {
  readonly kind: 'button';
  /** The button's opaque `id`, exactly as it was sent. */
  readonly token: string;
  readonly chatRef: ChatRef;
  readonly threadRef?: string;
  /** The message that carried the button (for a split message: the part holding the buttons). */
  readonly messageRef: MessageRef;
  readonly user: ChatUser;
  /** Pass to `answer()` / `askForReason()`, before the handler returns. */
  readonly interaction: Interaction;
  readonly idempotencyKey: string;
  /**
   * The chat whose binding and roles decide what the user may do, when it is not the chat the
   * event came from (a console session signed in through that chat); answers still go to chatRef.
   */
  readonly accessChat?: AccessChat;
}

/** A user answered one of our messages (for example the prompt of `askForReason`). */
export interface Reply {
  readonly kind: 'reply';
  readonly text: string;
  /** The message replied to, in the form `askForReason` returned. */
  readonly replyToMessageRef: MessageRef;
  readonly chatRef: ChatRef;
  readonly threadRef?: string;
  readonly user: ChatUser;
  /** Files attached to the reply (photos, documents), oldest first. */
  readonly files?: readonly InboundFile[];
  readonly idempotencyKey: string;
  /**
   * The chat whose binding and roles decide what the user may do, when it is not the chat the
   * event came from (a console session signed in through that chat); answers still go to chatRef.
   */
  readonly accessChat?: AccessChat;
}

/**
 * Plain text written to the bot in a private chat (no command, no reply to one of our messages).
 * Adapters emit it for private chats only; plain text in groups is others' conversation.
 */
export interface DirectText {
  readonly kind: 'text';
  readonly text: string;
  readonly chatRef: ChatRef;
  readonly user: ChatUser;
  readonly idempotencyKey: string;
}

/**
 * A person edited a message they sent earlier (Telegram `edited_message`, Slack
 * `message_changed`, Discord MESSAGE_UPDATE). Edits are never applied (a command is not run
 * again, a note keeps its first words); chatops says so when the message was for the bot.
 */
export interface Edit {
  readonly kind: 'edit';
  /** The message's text after the edit. */
  readonly text: string;
  readonly chatRef: ChatRef;
  readonly threadRef?: string;
  readonly user: ChatUser;
  /** The idempotency key the message had when first sent: what it did is found by it. */
  readonly originalKey: string;
  /** The edited text is a command for this bot: its verb. */
  readonly command?: string;
  /** One per edit (the message and the edit's time): a redelivery carries the same key. */
  readonly idempotencyKey: string;
}

/** Everything an adapter emits inbound. */
export type InboundEvent = Command | ButtonPress | Reply | DirectText | Edit;

/** Receives inbound events; a rejection is logged by the adapter and the event is not redelivered. */
export type InboundHandler = (event: InboundEvent) => Promise<void>;

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
