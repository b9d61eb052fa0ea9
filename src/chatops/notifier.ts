/**
 * The notifier: who follows a run, and one status message per run per chat, edited in place as
 * steps start and finish (edits coalesced: latest state wins, at most one edit per interval).
 * Ends and blocks get a NEW message, since edits do not make phones ping.
 *
 * Status message refs are kept in bridge.db (`status_messages`): after a restart the next update
 * of a run edits the same message; only when that message is gone (NOT_FOUND) is a new one posted.
 * Chats whose channel lost its messages get the status of a waiting run at once (`repost`): no
 * update may come for hours.
 */
import { resolve } from 'node:path';
import type { OutgoingMessage } from '../bridges/messages.ts';
import type { RunEvent } from '../engine/events.ts';
import { isTerminal, type RunState } from '../engine/model.ts';
import { PhasebridgeError } from '../errors.ts';
import { Coalescer, REAL_TIMERS, type Timers } from './coalescer.ts';
import {
  bindingChatRef,
  type ChatOpsDeps,
  channelFor,
  rememberRunMessage,
  sendTo,
  urgencyIn,
} from './context.ts';
import { ChatRefusals } from './refusals.ts';
import { outcomeMessage, renderStatus } from './status-message.ts';
import { fullAccessSteps } from './step-permissions.ts';

/** Posts and edits status messages and announces run ends. */
export class Notifier {
  readonly #deps: ChatOpsDeps;
  readonly #refusals: ChatRefusals;
  readonly #edits: Coalescer;
  /** Chats that asked to follow a run (e.g. the chat that started it), besides bound ones. */
  readonly #followers = new Map<string, Set<string>>();
  readonly #latest = new Map<string, RunState>();
  readonly #chats = new Map<string, readonly string[]>();
  readonly #progress = new Map<string, { stepId: string; text: string }>();
  /** Per run and chat, the status message found gone (the key of the next one names it). */
  readonly #gone = new Map<string, string>();

  /**
   * `editIntervalMs`: minimum time between two edits of one status message; `refusals` acts on
   * chats that refuse a message (marked unreachable and left out, or moved).
   */
  constructor(
    deps: ChatOpsDeps,
    editIntervalMs: number,
    timers: Timers = REAL_TIMERS,
    refusals: ChatRefusals = new ChatRefusals(deps),
  ) {
    this.#deps = deps;
    this.#refusals = refusals;
    const onError = (err: unknown) =>
      deps.log.warn({ err }, 'chatops: status message not delivered');
    this.#edits = new Coalescer(editIntervalMs, onError, timers);
  }

  /**
   * The chats that follow a run: the chat it was started from (runs index), chats that asked to
   * follow it, and every chat bound to the run's workspace.
   */
  async followers(state: RunState): Promise<string[]> {
    const chats = new Set(this.#followers.get(state.id) ?? []);
    const indexed = await this.#deps.repos.runs.get(state.id);
    if (indexed?.originChat) chats.add(indexed.originChat);
    const workspace = resolve(state.workspace);
    for (const b of await this.#deps.repos.bindings.list()) {
      if (resolve(b.workspace) === workspace) chats.add(bindingChatRef(b));
    }
    // A chat that refused us is left out until someone there acts (ChatRefusals.retry).
    return this.#refusals.reachable(
      [...chats].filter((c) => channelFor(this.#deps, c) !== undefined),
    );
  }

  /** Makes `chat` follow a run; it gets the status message at the run's next update (or now). */
  follow(runId: string, chat: string): void {
    const set = this.#followers.get(runId) ?? new Set<string>();
    this.#followers.set(runId, set);
    if (set.has(chat)) return;
    set.add(chat);
    const chats = this.#chats.get(runId);
    if (chats && !chats.includes(chat)) this.#chats.set(runId, [...chats, chat]);
    if (this.#latest.has(runId)) this.#schedule(runId, chat);
  }

  /** A run changed: schedule status edits; announce an end or a block with a new message. */
  async update(
    state: RunState,
    events: readonly RunEvent[],
    chats: readonly string[],
  ): Promise<void> {
    this.#latest.set(state.id, state);
    this.#chats.set(state.id, chats);
    const progress = this.#progress.get(state.id);
    if (progress && state.steps.find((s) => s.id === progress.stepId)?.status !== 'running') {
      this.#progress.delete(state.id);
    }
    // A state people must see (an end, a block, a checkpoint) is queued at once where the
    // channel paces and coalesces edits itself: the outbox puts it before progress edits, while
    // the edit interval would hold it back up to a second (a chat's slot lost to a progress edit).
    const urgent = state.status !== 'active';
    for (const chat of chats) this.#schedule(state.id, chat, urgent);
    const ended = isTerminal(state.status);
    if (!ended && !events.some((e) => e.type === 'runBlocked')) return;
    // The status message shows the final state before the announcement arrives (queued before
    // it, for a paced channel). Chats are told in parallel; each chat's order is its queue's.
    await Promise.all(chats.map((c) => this.#edits.settled(statusKey(state.id, c))));
    await Promise.all(
      chats.map((chat) =>
        this.#refusals
          .deliver(
            chat,
            async (to) => {
              const ref = await sendTo(this.#deps, to, {
                ...outcomeMessage(state),
                urgency: 'notice',
                // A restart replaying the end finds it sent (keyed by what it is about).
                key: ended ? `end:${state.id}` : `block:${state.id}:${state.updatedAt}`,
              });
              // A reply to the outcome is answered (a note, or: the run is over), issue 29.
              await rememberRunMessage(this.#deps, ref, state.id, 'outcome');
              return ref;
            },
            { runId: state.id, chats },
          )
          .catch((err: unknown) =>
            this.#deps.log.warn({ err, chat }, 'chatops: run end not announced'),
          ),
      ),
    );
    if (ended) await this.#forget(state.id, chats);
  }

  /**
   * Posts the run's status as a new message in `chats` now (their earlier status message was lost
   * in a restart) and resolves once delivered; later updates edit it.
   */
  async repost(state: RunState, chats: readonly string[]): Promise<void> {
    this.#latest.set(state.id, state);
    const known = this.#chats.get(state.id) ?? [];
    this.#chats.set(state.id, [...new Set([...known, ...chats])]);
    for (const chat of chats) {
      // A new message, not the lost one: its key names the one it replaces.
      const lost = await this.#deps.repos.statusMessages.get(state.id, chat);
      this.#gone.set(statusKey(state.id, chat), lost ?? `repost:${this.#deps.clock().getTime()}`);
      await this.#deps.repos.statusMessages.delete(state.id, chat);
      this.#schedule(state.id, chat);
    }
    await Promise.all(chats.map((c) => this.#edits.settled(statusKey(state.id, c))));
  }

  /** A running step printed a progress line: shown in the status message. */
  progress(runId: string, stepId: string, text: string): void {
    const state = this.#latest.get(runId);
    if (state?.steps.find((s) => s.id === stepId)?.status !== 'running') return;
    this.#progress.set(runId, { stepId, text });
    for (const chat of this.#chats.get(runId) ?? []) this.#schedule(runId, chat);
  }

  /** Delivers every pending status edit now (at shutdown). */
  flush(): Promise<void> {
    return this.#edits.flushAll();
  }

  #schedule(runId: string, chat: string, urgent = false): void {
    const key = statusKey(runId, chat);
    const now = urgent && channelFor(this.#deps, chat)?.paced === true;
    this.#edits.push(
      key,
      async () => {
        const state = this.#latest.get(runId);
        const channel = channelFor(this.#deps, chat);
        if (!state || !channel) return;
        const message: OutgoingMessage = {
          ...renderStatus(
            state,
            this.#deps.clock().getTime(),
            this.#progress.get(runId)?.text,
            await fullAccessSteps(this.#deps.repos, state),
          ),
          // A state people must see (an end, a block, a checkpoint) goes before progress edits.
          urgency: state.status === 'active' ? 'status' : 'notice',
        };
        const refs = this.#deps.repos.statusMessages;
        const ref = await refs.get(runId, chat);
        if (ref !== null) {
          const edited = channel.edit(ref, message).then(
            () => true,
            async (err: unknown) => {
              // Deleted in the chat (or aged out of the console): post a new one; a refusal is acted
              // on (dropped, or a new one where it says); others are real failures.
              if (err instanceof PhasebridgeError && err.code === 'NOT_FOUND') {
                this.#deps.log.info(
                  { runId, chat },
                  'chatops: status message gone, posting a new one',
                );
                return false;
              }
              const outcome = await this.#refusals.refused(chat, err, { runId });
              if (outcome === undefined) throw err;
              return 'dropped' in outcome;
            },
          );
          // A paced channel coalesces waiting edits itself: queue this one and let the next come.
          if (channel.paced) {
            void edited.then(
              (ok) => (ok ? undefined : this.#repostGone(runId, chat, ref)),
              (err: unknown) =>
                this.#deps.log.warn({ err }, 'chatops: status message not delivered'),
            );
            return;
          }
          if (await edited) return;
        }
        // In the chat of `/run`, the status message is the answer the person waits for.
        const urgency = await urgencyIn(this.#deps, runId, chat, 'notice');
        const sent = await this.#refusals.deliver(
          chat,
          (to) =>
            sendTo(this.#deps, to, {
              ...message,
              urgency,
              // Delivered by the next process after a crash, it is still the run's status message;
              // a restart re-posting it finds it queued or sent (a new one only after one is gone).
              owner: { kind: 'status', runId, chatRef: chat },
              key: `status:${runId}:${this.#gone.get(statusKey(runId, chat)) ?? 'first'}`,
            }),
          { runId, chats: this.#chats.get(runId) ?? [] },
        );
        if (sent !== undefined) await refs.set(runId, chat, sent);
      },
      now,
    );
  }

  /** A queued edit found its message gone: forget the ref (unless replaced meanwhile) and post anew. */
  async #repostGone(runId: string, chat: string, ref: string): Promise<void> {
    const refs = this.#deps.repos.statusMessages;
    if ((await refs.get(runId, chat)) !== ref) return;
    this.#gone.set(statusKey(runId, chat), ref);
    await refs.delete(runId, chat);
    if (this.#latest.has(runId)) this.#schedule(runId, chat);
  }

  async #forget(runId: string, chats: readonly string[]): Promise<void> {
    for (const chat of chats) {
      this.#edits.forget(statusKey(runId, chat));
      this.#gone.delete(statusKey(runId, chat));
    }
    for (const map of [this.#followers, this.#latest, this.#chats, this.#progress])
      map.delete(runId);
    // A reply to an ended run's status message is told the run is over (issue 29).
    const refs = this.#deps.repos.statusMessages;
    for (const chat of await refs.chatsOf(runId)) {
      await rememberRunMessage(
        this.#deps,
        (await refs.get(runId, chat)) ?? undefined,
        runId,
        'status',
      );
    }
    await refs.deleteRun(runId);
  }
}

const statusKey = (runId: string, chat: string): string => `${runId}|${chat}`;
