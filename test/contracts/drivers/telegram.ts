/**
 * The Telegram driver: people in a supergroup talking to the bot through the fake Bot API
 * (long polling, or webhook delivery when the bridge runs in webhook mode).
 */
import {
  type FakeChat,
  FakeTelegram,
  type FakeTelegramOptions,
  type FakeUser,
  type StoredMessage,
} from '../../fakes/telegram.ts';
import type {
  AttachedFile,
  Persona,
  PlatformDriver,
  Press,
  SeenFile,
  SeenMessage,
} from '../platform-driver.ts';
import { waitFor } from '../platform-driver.ts';

const PEOPLE: Readonly<Record<Persona, FakeUser>> = {
  alice: { id: 501, first_name: 'Alice', username: 'alice' },
  bob: { id: 502, first_name: 'Bob', username: 'bob' },
  carol: { id: 503, first_name: 'Carol', username: 'carol' },
  dave: { id: 504, first_name: 'Dave', username: 'dave' },
};

/** The team's supergroup. */
export const TEAM: FakeChat = { id: -1001, type: 'supergroup', title: 'Team' };

/** A press: the callback query the fake pushed. */
interface TelegramPress {
  readonly queryId: string;
  /** Bot messages in the chat before the press (the reason prompt comes after). */
  readonly before: number;
}

const buttonsOf = (m: StoredMessage): string[] =>
  ((m.replyMarkup?.inline_keyboard ?? []) as { text: string }[][]).flat().map((b) => b.text);

const seen = (m: StoredMessage): SeenMessage => ({
  id: String(m.message_id),
  text: m.text ?? '',
  buttons: buttonsOf(m),
  edited: m.edits > 0,
});

/** Drives a fake Telegram; PlatformDriver documents its members. */
export class TelegramDriver implements PlatformDriver {
  readonly platform = 'telegram' as const;
  readonly singleUser = false;
  readonly chatRef = `telegram:${TEAM.id}`;
  /** The fake, for platform-specific checks. */
  readonly fake: FakeTelegram;

  private constructor(fake: FakeTelegram) {
    this.fake = fake;
    fake.addChat(TEAM);
  }

  /** Starts the fake Bot API (with `options`: its clock, webhook retries…). */
  static async start(options: FakeTelegramOptions = {}): Promise<TelegramDriver> {
    return new TelegramDriver(await FakeTelegram.start(options));
  }

  env(): Record<string, string> {
    return { TELEGRAM_BOT_TOKEN: this.fake.token, TELEGRAM_API_ROOT: this.fake.apiRoot };
  }

  async attach(): Promise<void> {}

  userId(who: Persona): string {
    return String(PEOPLE[who].id);
  }

  displayName(who: Persona): string {
    return `@${PEOPLE[who].username}`;
  }

  /** The fake user of a persona. */
  user(who: Persona): FakeUser {
    return PEOPLE[who];
  }

  /** The last message each persona sent through the driver (what `editLast` edits). */
  readonly #last = new Map<Persona, number>();

  async sendCommand(who: Persona, text: string): Promise<void> {
    const sent = this.fake.userSends({ chat: TEAM, from: PEOPLE[who], text: `/${text}` });
    this.#last.set(who, Number((sent.message as { message_id?: unknown }).message_id));
  }

  /** An `edited_message` of the persona's last message. */
  async editLast(who: Persona, text: string): Promise<void> {
    const messageId = this.#last.get(who);
    if (messageId === undefined) throw new Error(`${who} sent nothing to edit`);
    this.fake.userEdits({ chatId: TEAM.id, messageId, text });
  }

  /** The persona's last command, edited to another command (Telegram lets its author). */
  async editCommand(who: Persona, text: string): Promise<void> {
    await this.editLast(who, `/${text}`);
  }

  /** The same message delivered in a second update, as Telegram does after a failed delivery. */
  async deliverTwice(who: Persona, text: string): Promise<void> {
    const update = this.fake.userSends({ chat: TEAM, from: PEOPLE[who], text: `/${text}` });
    this.fake.pushUpdate({ message: update.message });
  }

  latestMessages(): SeenMessage[] {
    return this.fake.botMessages(TEAM.id).map(seen);
  }

  /** Bot messages replying to `message` (`reply_to_message`). */
  repliesTo(message: SeenMessage): SeenMessage[] {
    return this.fake
      .botMessages(TEAM.id)
      .filter((m) => m.replyToId === Number(message.id))
      .map(seen);
  }

  /** sendChatAction `typing` calls the fake answered for the team's chat. */
  typingShown(): number {
    return this.fake.calls.filter(
      (c) =>
        c.method === 'sendChatAction' &&
        c.ok &&
        Number(c.params.chat_id) === TEAM.id &&
        c.params.action === 'typing',
    ).length;
  }

  async press(who: Persona, message: SeenMessage, label: string): Promise<Press> {
    const before = this.fake.botMessages(TEAM.id).length;
    const update = this.fake.userPresses({
      chatId: TEAM.id,
      messageId: Number(message.id),
      from: PEOPLE[who],
      label,
    });
    const queryId = String((update.callback_query as { id: string }).id);
    const handle: TelegramPress = { queryId, before };
    return { persona: who, label, handle };
  }

  /** The callback query's answer, shown as an alert to the presser only. */
  async answerTo(press: Press): Promise<string> {
    const { queryId } = press.handle as TelegramPress;
    const answer = await waitFor(() => {
      const a = this.fake.callbackAnswers.get(queryId);
      return typeof a?.text === 'string' ? a : undefined;
    }, 'the answer to a callback query');
    if (answer.show_alert !== true) throw new Error('the answer was not private (an alert)');
    return String(answer.text);
  }

  /** Replies to the ForceReply prompt the press brought. */
  async replyReason(press: Press, text: string): Promise<void> {
    const { before } = press.handle as TelegramPress;
    const prompt = await waitFor(
      () =>
        this.fake
          .botMessages(TEAM.id)
          .slice(before)
          .find((m) => (m.replyMarkup as { force_reply?: boolean } | undefined)?.force_reply),
      'the reason prompt',
    );
    this.fake.userReplies({
      chatId: TEAM.id,
      messageId: prompt.message_id,
      from: PEOPLE[press.persona],
      text,
    });
  }

  /** `@phasebridge_bot` alone in the group (a mention entity, no command). */
  async mentionBot(who: Persona): Promise<void> {
    this.fake.userSends({ chat: TEAM, from: PEOPLE[who], text: `@${this.fake.bot.username}` });
  }

  /** A Telegram reply to the bot's message. */
  async replyTo(who: Persona, message: SeenMessage, text: string): Promise<void> {
    const sent = this.fake.userReplies({
      chatId: TEAM.id,
      messageId: Number(message.id),
      from: PEOPLE[who],
      text,
    });
    this.#last.set(who, Number((sent.message as { message_id?: unknown }).message_id));
  }

  async sendCommandWithFile(who: Persona, text: string, file: AttachedFile): Promise<void> {
    this.fake.userSendsFile({
      chat: TEAM,
      from: PEOPLE[who],
      caption: `/${text}`,
      ...(file.photo
        ? { photo: file.data }
        : { document: { fileName: file.name, data: file.data } }),
    });
  }

  /** A Telegram reply to the bot's message, with a photo or document and the text as caption. */
  async replyToWithFile(
    who: Persona,
    message: SeenMessage,
    text: string,
    file: AttachedFile,
  ): Promise<void> {
    this.fake.userSendsFile({
      chat: TEAM,
      from: PEOPLE[who],
      caption: text,
      replyTo: Number(message.id),
      ...(file.photo
        ? { photo: file.data }
        : { document: { fileName: file.name, data: file.data } }),
    });
  }

  async sentFiles(): Promise<SeenFile[]> {
    return this.fake
      .botMessages(TEAM.id)
      .filter((m) => m.document !== undefined)
      .map((m) => ({
        name: m.document!.fileName,
        data: m.document!.data,
        caption: m.caption ?? '',
      }));
  }

  async close(): Promise<void> {
    await this.fake.close();
  }
}
