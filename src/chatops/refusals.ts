/**
 * What the bridge does when a platform refuses a chat (ChatUnreachableError from an adapter):
 * - the chat moved (a Telegram group became a supergroup): its bindings and runs follow it to the
 *   new id, the new chat is told so, and the message is sent again there;
 * - only a thread or topic refuses (archived, closed, deleted): the message goes to its chat;
 * - otherwise the chat is marked unreachable in bridge.db with the reason, left out of every
 *   later update (the run and the other chats go on), and the run's starter and the binding's
 *   admins are told once, in another chat they use; the log has it for the console and doctor.
 * The chat is tried again when an operator writes there or an admin binds it again (`retry`).
 *
 * One entry point, `refused(chat, error)`, so the outbox's permanent-failure hook can call it.
 */
import type { ChatRef } from '../bridges/messages.ts';
import { parseChatRef } from '../bridges/refs.ts';
import { prose } from '../bridges/render-text.ts';
import { CONSOLE_CHAT_REF } from '../bridges/web/outbound.ts';
import { ChatUnreachableError } from '../errors.ts';
import { bindingChatRef, type ChatOpsDeps, channelFor, platformOf, sendTo } from './context.ts';

/** About the message being delivered: its run, and every chat it goes to. */
export interface DeliveryContext {
  readonly runId?: string;
  /** The other chats getting this message: a fallback to one of them is dropped (no double). */
  readonly chats?: readonly ChatRef[];
}

/** What became of a refused message: send it again to `retryAt`, or drop it (`dropped`). */
export type RefusalOutcome = { readonly retryAt: ChatRef } | { readonly dropped: true };

/** Why a person should care, per reason; the platform's own reason is shown as well. */
const HINTS: Readonly<Record<string, string>> = {
  bot_kicked: 'the bot was removed from it; add it back',
  bot_blocked: 'the bot was blocked there; unblock it',
  bot_not_member: 'the bot is not a member; add it back',
  channel_not_found: 'the channel is gone or the bot cannot see it',
  not_in_channel: 'the bot is not in the channel; invite it',
  is_archived: 'the channel was archived; unarchive it or bind another one',
  missing_access: 'the bot cannot see the channel; give it View Channel',
  missing_permissions: 'the bot lacks a permission there (Send Messages, Embed Links…)',
};

/** Marks, announces and retries chats that refuse us. */
export class ChatRefusals {
  readonly #deps: ChatOpsDeps;

  /** Uses the shared chatops dependencies. */
  constructor(deps: ChatOpsDeps) {
    this.#deps = deps;
  }

  /** `chats` without those marked unreachable. */
  async reachable(chats: readonly ChatRef[]): Promise<ChatRef[]> {
    const marked = new Set((await this.#deps.repos.unreachable.list()).map((u) => u.chatRef));
    return chats.filter((c) => !marked.has(c));
  }

  /**
   * A platform refused a message to `chat`: acts on it (see the file's comment). Returns where
   * to send the message instead, or `dropped`; undefined when `err` is not a refusal (the caller
   * handles it as before).
   */
  async refused(
    chat: ChatRef,
    err: unknown,
    context: DeliveryContext = {},
  ): Promise<RefusalOutcome | undefined> {
    if (!(err instanceof ChatUnreachableError)) return undefined;
    if (err.movedTo !== undefined) return this.#moved(chat, err.movedTo);
    const parent = threadParent(chat);
    if (err.scope === 'thread' && parent !== undefined) {
      this.#deps.log.info(
        { chat, reason: err.reason },
        'chatops: thread refused, posting in its chat',
      );
      return { retryAt: parent };
    }
    const first = await this.#deps.repos.unreachable.mark(chat, err.reason, err.message);
    if (!first) return { dropped: true };
    this.#deps.log.warn({ chat, reason: err.reason, err }, 'chatops: chat marked unreachable');
    await this.#tell(chat, err, context.runId);
    return { dropped: true };
  }

  /**
   * Sends with `send(chat)`; on a refusal, acts on it and sends once more where it says (the new
   * chat, the thread's chat). Undefined when the message was dropped; other errors are thrown.
   */
  async deliver<T>(
    chat: ChatRef,
    send: (to: ChatRef) => Promise<T>,
    context: DeliveryContext = {},
  ): Promise<T | undefined> {
    try {
      return await send(chat);
    } catch (err) {
      const outcome = await this.refused(chat, err, context);
      if (outcome === undefined) throw err;
      if ('dropped' in outcome) return undefined;
      // The thread's chat gets its own copy already: one is enough.
      if (outcome.retryAt !== chat && context.chats?.includes(outcome.retryAt)) return undefined;
      try {
        return await send(outcome.retryAt);
      } catch (again) {
        if ((await this.refused(outcome.retryAt, again, context)) === undefined) throw again;
        return undefined;
      }
    }
  }

  /** Someone acted in `chat` (an operator's message, an admin's bind): it is tried again. */
  async retry(chat: ChatRef): Promise<void> {
    const refs = new Set([chat, threadParent(chat) ?? chat]);
    for (const ref of refs) {
      if (await this.#deps.repos.unreachable.clear(ref)) {
        this.#deps.log.info({ chat: ref }, 'chatops: unreachable chat is tried again');
      }
    }
  }

  async #moved(from: ChatRef, to: ChatRef): Promise<RefusalOutcome> {
    const { repos, log } = this.#deps;
    const moved = await repos.bindings.moveChat(from, to);
    await repos.runs.moveOriginChat(from, to);
    await repos.unreachable.clear(from);
    log.info({ from, to, bindings: moved }, 'chatops: chat moved to a new id; bindings follow it');
    const text = `This chat got a new id on ${platformOf(from)} (it became a supergroup): phasebridge now serves it as \`${to}\`, with the same workspace and roles.`;
    await channelFor(this.#deps, to)
      ?.send(to, { text: prose(text) })
      .catch((err: unknown) => log.warn({ err, chat: to }, 'chatops: move not announced'));
    return { retryAt: to };
  }

  /** Tells the run's starter and the binding's admins, each in one other chat that works. */
  async #tell(chat: ChatRef, err: ChatUnreachableError, runId?: string): Promise<void> {
    const { repos, log } = this.#deps;
    const people: string[] = [];
    const targets = new Set<ChatRef>();
    if (runId !== undefined) {
      const run = await repos.runs.get(runId);
      if (run?.originChat && run.originChat !== chat) targets.add(run.originChat);
      if (run?.startedBy) people.push(run.startedBy);
    }
    people.push(...(await this.#admins(chat)));
    for (const person of people) {
      const theirs = await this.#chatsOf(person, chat);
      if (!theirs.some((c) => targets.has(c)) && theirs[0] !== undefined) targets.add(theirs[0]);
    }
    const hint = HINTS[err.reason] ?? 'it refuses the bot';
    const text = `⚠️ phasebridge cannot post in \`${chat}\` (${err.reason}): ${hint}. Runs go on in the other chats; it is tried again when an operator writes there or an admin binds it again.`;
    let told = 0;
    for (const target of await this.reachable([...targets])) {
      try {
        await sendTo(this.#deps, target, { text: prose(text) });
        told++;
      } catch (e) {
        log.warn({ err: e, chat: target }, 'chatops: could not tell about an unreachable chat');
      }
    }
    // Nobody could be told in a chat: the web console (bound to every bridge) has it.
    if (told === 0 && chat !== CONSOLE_CHAT_REF && channelFor(this.#deps, CONSOLE_CHAT_REF)) {
      await sendTo(this.#deps, CONSOLE_CHAT_REF, { text: prose(text) }).then(
        () => told++,
        (e: unknown) => log.warn({ err: e }, 'chatops: console not told'),
      );
    }
    if (told === 0) {
      log.error({ chat, reason: err.reason }, 'chatops: unreachable chat, nobody to tell in chat');
    }
  }

  /** The admins (`platform:id`) of the binding serving `chat`. */
  async #admins(chat: ChatRef): Promise<string[]> {
    const { repos } = this.#deps;
    const parent = threadParent(chat);
    const binding = await repos.bindings.find(
      parent ?? chat,
      parent === undefined ? null : chat.slice(parent.length + 1),
    );
    if (!binding) return [];
    const entries = await repos.allowlist.list({ scope: { bindingId: binding.id } });
    return entries.filter((e) => e.role === 'admin').map((e) => `${e.platform}:${e.userId}`);
  }

  /** Bound chats other than `except` where a person (`platform:id`) has a role, reachable ones. */
  async #chatsOf(person: string, except: ChatRef): Promise<ChatRef[]> {
    const { repos } = this.#deps;
    const entries = (await repos.allowlist.list()).filter(
      (e) => `${e.platform}:${e.userId}` === person && e.bindingId !== null,
    );
    const chats: ChatRef[] = [];
    for (const e of entries) {
      const b = await repos.bindings.get(e.bindingId!);
      if (b && bindingChatRef(b) !== except && b.chatRef !== except) chats.push(bindingChatRef(b));
    }
    return this.reachable(chats);
  }
}

/** The chat of a thread ref (`slack:T:C:ts` → `slack:T:C`); undefined for a thread-less ref. */
function threadParent(chat: ChatRef): ChatRef | undefined {
  try {
    const ref = parseChatRef(chat);
    return ref.thread === undefined ? undefined : ref.chat;
  } catch {
    return undefined;
  }
}
