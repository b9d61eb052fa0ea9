/**
 * What crosses the Channel port (channel.ts) inward: the events an adapter emits (commands,
 * button presses, replies, private text, edits) and the people and files they carry.
 */
import type { ChatRef, MessageRef } from './messages.ts';
import type { Platform } from './refs.ts';

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
