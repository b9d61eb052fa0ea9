/**
 * What crosses the Channel port (channel.ts) outward: platform-neutral messages and files, their
 * rich text, buttons and urgency, and the opaque refs of chats and sent messages.
 */

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
