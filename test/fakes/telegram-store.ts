/**
 * The fake Telegram's chats and messages, with the checks Telegram makes on sending and editing
 * (known chat, HTML that parses, at most 4096 visible characters, 1-64 byte callback data).
 */
import { FakeChatAccess } from './telegram-access.ts';
import {
  bad,
  type FakeChat,
  type FakeUser,
  type Json,
  parseTelegramHtml,
  type StoredMessage,
  threadOf,
} from './telegram-wire.ts';

/** Chats and messages; message ids count per chat, as in Telegram. */
export class FakeMessageStore {
  readonly #chats = new Map<number, FakeChat>();
  readonly #messages = new Map<string, StoredMessage>();
  readonly #nextMessageId = new Map<number, number>();
  /** Where the bot may post (kicked, blocked, migrated chats; closed topics). */
  readonly access = new FakeChatAccess();

  /** `bot` is the sender of everything the bot API sends. */
  constructor(readonly bot: FakeUser) {}

  /** Makes a chat known (a bot can only post where it has been added). */
  addChat(chat: FakeChat): FakeChat {
    this.#chats.set(chat.id, chat);
    return chat;
  }

  /** A stored message. */
  message(chatId: number, messageId: number): StoredMessage | undefined {
    return this.#messages.get(`${chatId}:${messageId}`);
  }

  /** Messages the bot sent to a chat that still exist, oldest first. */
  botMessages(chatId: number): StoredMessage[] {
    return [...this.#messages.values()].filter(
      (m) => m.chat.id === chatId && m.from.id === this.bot.id && !m.deleted,
    );
  }

  /** Stores a new message with the chat's next id. */
  store(m: Omit<StoredMessage, 'message_id'>, topic: number | undefined): StoredMessage {
    const id = this.#nextMessageId.get(m.chat.id) ?? 100;
    this.#nextMessageId.set(m.chat.id, id + 1);
    const stored: StoredMessage = {
      ...m,
      message_id: id,
      ...(topic !== undefined && { threadId: topic }),
    };
    this.#messages.set(`${m.chat.id}:${id}`, stored);
    return stored;
  }

  /** The chat (and topic) a call targets; 400 when unknown, the refusal when the bot may not post. */
  chat(p: Json): FakeChat {
    const chat = this.#chats.get(Number(p.chat_id));
    if (!chat) throw bad('chat not found');
    this.access.check(chat, threadOf(p));
    return chat;
  }

  /** The bot message a call targets; 400 `notFound` when missing. */
  botMessage(p: Json, notFound: string): StoredMessage {
    const chat = this.#chats.get(Number(p.chat_id));
    if (chat) this.access.check(chat);
    const m = this.message(Number(p.chat_id), Number(p.message_id));
    if (!m || m.deleted) throw bad(notFound);
    // A person's message: the bot may not edit it (deleting it needs admin rights it lacks here).
    if (m.from.id !== this.bot.id) {
      throw bad(notFound.includes('edit') ? "message can't be edited" : "message can't be deleted");
    }
    return m;
  }

  /** The visible text after parse_mode, checked for emptiness and length. */
  visible(p: Json, text: string, max: number): string {
    const visible = p.parse_mode === 'HTML' ? parseTelegramHtml(text) : text;
    if (visible.trim() === '') throw bad('message text is empty');
    if (visible.length > max) throw bad('message is too long');
    return visible;
  }

  #markup(p: Json): Json | undefined {
    const markup = p.reply_markup as Json | undefined;
    for (const b of ((markup?.inline_keyboard ?? []) as Json[][]).flat()) {
      const bytes = Buffer.byteLength(String(b.callback_data ?? ''), 'utf8');
      if (b.callback_data !== undefined && (bytes < 1 || bytes > 64))
        throw bad('BUTTON_DATA_INVALID');
    }
    return markup;
  }

  /** sendMessage. */
  sendText(p: Json): StoredMessage {
    const chat = this.chat(p);
    const text = this.visible(p, String(p.text ?? ''), 4096);
    const markup = this.#markup(p);
    const replyTo = (p.reply_parameters as Json | undefined)?.message_id as number | undefined;
    return this.store(
      {
        chat,
        from: this.bot,
        text,
        rawText: String(p.text),
        silent: p.disable_notification === true,
        edits: 0,
        ...(markup && { replyMarkup: markup }),
        ...(replyTo !== undefined && { replyToId: replyTo }),
      },
      threadOf(p),
    );
  }

  /** sendDocument (a caption of at most 1024 visible characters). */
  sendDocument(p: Json): StoredMessage {
    const doc = p.document as { fileName: string; data: Buffer } | undefined;
    if (!doc?.data) throw bad('there is no document in the request');
    const caption = p.caption === undefined ? undefined : this.visible(p, String(p.caption), 1024);
    return this.store(
      {
        chat: this.chat(p),
        from: this.bot,
        document: doc,
        ...(caption && { caption }),
        edits: 0,
      },
      threadOf(p),
    );
  }

  /** editMessageText / editMessageReplyMarkup. */
  edit(method: string, p: Json): StoredMessage {
    const m = this.botMessage(p, 'message to edit not found');
    const text =
      method === 'editMessageText' ? this.visible(p, String(p.text ?? ''), 4096) : m.text;
    const markup = this.#markup(p);
    const keyboard = (x: Json | undefined) =>
      JSON.stringify((x?.inline_keyboard as unknown[] | undefined) ?? []);
    if (text === m.text && keyboard(markup) === keyboard(m.replyMarkup)) {
      throw bad(
        'message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message',
      );
    }
    Object.assign(m, { text, edits: m.edits + 1, replyMarkup: markup });
    if (method === 'editMessageText') m.rawText = String(p.text);
    return m;
  }
}
