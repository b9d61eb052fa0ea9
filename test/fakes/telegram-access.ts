/**
 * Who may post where in the fake Telegram, as state the tests change like people do in the app:
 * an admin removes the bot from a group (403 "bot was kicked"), a user blocks it in a private chat
 * (403 "blocked by the user"), a group is upgraded to a supergroup (400 with
 * `migrate_to_chat_id`; the old id refuses every call from then on), a forum topic is closed
 * (400 TOPIC_CLOSED) or deleted (400 "message thread not found").
 */
import { ApiError, bad, CALLBACK_QUERY_TTL_MS, type FakeChat } from './telegram-wire.ts';

/** The membership and topic state of the fake's chats. */
export class FakeChatAccess {
  readonly #removed = new Map<number, 'kicked' | 'blocked'>();
  readonly #migrated = new Map<number, number>();
  readonly #closedTopics = new Set<string>();
  readonly #deletedTopics = new Set<string>();

  /** An admin removed the bot from a group or supergroup (or a user blocked it in a DM). */
  removeBot(chat: FakeChat): void {
    this.#removed.set(chat.id, chat.type === 'private' ? 'blocked' : 'kicked');
  }

  /** The bot was added back (or unblocked). */
  addBot(chatId: number): void {
    this.#removed.delete(chatId);
  }

  /** The group became a supergroup with a new id; returns the new chat. */
  upgradeToSupergroup(chat: FakeChat, newId: number): FakeChat {
    this.#migrated.set(chat.id, newId);
    return { ...chat, id: newId, type: 'supergroup' };
  }

  /** A forum topic was closed by an admin (posting in it is refused until reopened). */
  closeTopic(chatId: number, topic: number): void {
    this.#closedTopics.add(`${chatId}:${topic}`);
  }

  /** A closed topic was reopened. */
  reopenTopic(chatId: number, topic: number): void {
    this.#closedTopics.delete(`${chatId}:${topic}`);
  }

  /** A forum topic was deleted with its messages. */
  deleteTopic(chatId: number, topic: number): void {
    this.#deletedTopics.add(`${chatId}:${topic}`);
  }

  /** Throws the Bot API's answer when the bot may not act in `chat` (and `topic`). */
  check(chat: FakeChat, topic?: number): void {
    const to = this.#migrated.get(chat.id);
    if (to !== undefined) {
      throw new ApiError(400, 'Bad Request: group chat was upgraded to a supergroup chat', {
        migrate_to_chat_id: to,
      });
    }
    const removed = this.#removed.get(chat.id);
    if (removed === 'blocked') throw new ApiError(403, 'Forbidden: bot was blocked by the user');
    if (removed === 'kicked') {
      const kind = chat.type === 'supergroup' ? 'supergroup chat' : 'group chat';
      throw new ApiError(403, `Forbidden: bot was kicked from the ${kind}`);
    }
    if (topic === undefined) return;
    if (this.#deletedTopics.has(`${chat.id}:${topic}`)) throw bad('message thread not found');
    if (this.#closedTopics.has(`${chat.id}:${topic}`)) throw bad('TOPIC_CLOSED');
  }
}

/** Callback queries waiting for an answer; Telegram takes one for about 15 s. */
export class FakeCallbackQueries {
  readonly #open = new Map<string, number>();

  /** `now` is the fake's clock (ms). */
  constructor(readonly now: () => number) {}

  /** A press made the query `id`. */
  open(id: string): void {
    this.#open.set(id, this.now());
  }

  /** Answers the query once; 400 when unknown, already answered or older than 15 s. */
  answer(id: string): void {
    const at = this.#open.get(id);
    this.#open.delete(id);
    if (at === undefined || this.now() - at > CALLBACK_QUERY_TTL_MS)
      throw bad('query is too old and response timeout expired or query ID is invalid');
  }
}
