/**
 * A Channel whose sends and edits go through an outbox (durable, paced, coalesced); everything
 * else goes straight to the adapter: answers to a button press must arrive within seconds
 * (Telegram 15 s, Slack's trigger 3 s), a private word to one person answers something they just
 * did, and files are rare and large.
 */
import type { AnswerOptions, Channel, ReasonAsk } from '../channel.ts';
import type { ChatUser, InboundFile, InboundHandler, Interaction } from '../events.ts';
import type { ChatRef, MessageRef, OutgoingFile, OutgoingMessage } from '../messages.ts';
import type { Outbox } from './outbox.ts';

/** Wraps `inner` so its sends and edits are queued in `outbox` (which calls `inner`). */
export class OutboxChannel implements Channel {
  readonly #inner: Channel;
  readonly #outbox: Outbox;

  /** The adapter's private word to one person, straight through (absent when it has none). */
  readonly whisper?: (chatRef: ChatRef, user: ChatUser, text: string) => Promise<void>;

  /** The adapter's private chat message to one person, straight through (never stored). */
  readonly directMessage?: (user: ChatUser, text: string) => Promise<void>;

  /** `outbox` must deliver through `inner`. */
  constructor(inner: Channel, outbox: Outbox) {
    this.#inner = inner;
    this.#outbox = outbox;
    if (inner.whisper) this.whisper = inner.whisper.bind(inner);
    if (inner.directMessage) this.directMessage = inner.directMessage.bind(inner);
  }

  /** Edits may be queued without waiting: the outbox coalesces them. */
  readonly paced = true;

  get platform() {
    return this.#inner.platform;
  }

  get capabilities() {
    return this.#inner.capabilities;
  }

  get fault(): string | undefined {
    return this.#inner.fault;
  }

  /** The outbox behind this channel (tests and the bench wait on it). */
  get outbox(): Outbox {
    return this.#outbox;
  }

  /** Starts the adapter, then delivers what a previous process left in the outbox. */
  async start(handler: InboundHandler): Promise<void> {
    await this.#inner.start(handler);
    this.#outbox.start();
  }

  /**
   * Stops the adapter receiving; the outbox keeps delivering until its own `stop` (the bridge
   * stops it after chatops flushed its last edits).
   */
  async stop(): Promise<void> {
    await this.#inner.stop();
  }

  async send(chatRef: ChatRef, message: OutgoingMessage): Promise<MessageRef> {
    return (await this.#outbox.enqueue('send', chatRef, message)) as MessageRef;
  }

  async post(
    chatRef: ChatRef,
    message: OutgoingMessage,
  ): Promise<{ delivered: Promise<MessageRef> }> {
    const { delivered } = await this.#outbox.commit('send', chatRef, message);
    return { delivered: delivered as Promise<MessageRef> };
  }

  async edit(messageRef: MessageRef, message: OutgoingMessage): Promise<void> {
    await this.#outbox.enqueue('edit', messageRef, message);
  }

  /** Straight to the adapter; an answer that becomes a chat message is posted through the outbox. */
  answer(interaction: Interaction, text: string, options: AnswerOptions): Promise<void> {
    return this.#inner.answer(interaction, text, {
      ...options,
      // Committed, not delivered: the press's handler does not wait for the chat's pace.
      post: (chatRef, message) => this.#outbox.queue('send', chatRef, message),
    });
  }

  askForReason(interaction: Interaction, prompt: string, ask?: ReasonAsk): Promise<MessageRef> {
    return this.#inner.askForReason(interaction, prompt, ask);
  }

  sendFile(chatRef: ChatRef, file: OutgoingFile): Promise<MessageRef> {
    return this.#inner.sendFile(chatRef, file);
  }

  /** Straight to the adapter: a typing indicator is worth nothing once late. */
  typing(chatRef: ChatRef): Promise<void> {
    return this.#inner.typing?.(chatRef) ?? Promise.resolve();
  }

  /** Downloads go straight to the adapter (never paced: they are not chat messages). */
  downloadFile(file: InboundFile, maxBytes: number): Promise<Uint8Array> {
    if (!this.#inner.downloadFile) {
      return Promise.reject(new Error(`${this.platform} does not download files`));
    }
    return this.#inner.downloadFile(file, maxBytes);
  }

  pairingLink(code: string): string | undefined {
    return this.#inner.pairingLink?.(code);
  }
}
