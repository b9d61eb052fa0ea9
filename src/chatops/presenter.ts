/**
 * The checkpoint presenter's message side: when a checkpoint opens, a new message with buttons in
 * every chat that follows the run; when it changes (a vote, an expiry, the decision), every copy
 * in every chat is edited. Copies and their button tokens live in bridge.db (checkpoint_messages),
 * so presses on messages sent before a restart still resolve. A chat whose channel loses its
 * messages on a restart gets the checkpoint again (`repost`): the newest copy per chat is the
 * current one, and the older copies' tokens are no longer accepted (`isCurrentCopy`).
 */

import type { OutgoingMessage } from '../bridges/messages.ts';
import { plain } from '../bridges/render-text.ts';
import type { CheckpointMessageRecord } from '../db/repositories/index.ts';
import { changesMax } from '../engine/checkpoint-policy.ts';
import type { RunEvent } from '../engine/events.ts';
import { type CheckpointState, type RunState, SYSTEM_ACTOR } from '../engine/model.ts';
import { pendingNotes } from '../engine/note-destination.ts';
import { PhasebridgeError } from '../errors.ts';
import { describePermissions } from '../jobs/runner/permissions.ts';
import { readChangedFiles } from './changed-files.ts';
import {
  type ButtonOptions,
  byExpiry,
  type CheckpointView,
  renderClosedCheckpoint,
  renderOpenCheckpoint,
} from './checkpoint-message.ts';
import { type ChatOpsDeps, channelFor, runLink, sendTo, urgencyIn } from './context.ts';
import { withDigest } from './digest-check.ts';
import { readLogTail } from './log-tail.ts';
import type { ChatRefusals, RefusalOutcome } from './refusals.ts';
import { hasStepDiff } from './step-diff.ts';
import { declaredPermissions } from './step-permissions.ts';

/** Event types that change a checkpoint's message. */
const CHANGES = new Set<RunEvent['type']>([
  'checkpointVoted',
  'checkpointResolved',
  'checkpointExpired',
  'checkpointWithdrawn',
]);

/** A digest that replaced an earlier one: the content changed, every copy shows the new one. */
function contentChanged(e: RunEvent): e is Extract<RunEvent, { type: 'checkpointDigestRecorded' }> {
  return e.type === 'checkpointDigestRecorded' && e.previous !== undefined;
}

/** The checkpoint with this id in a run (open or in the history). */
export function findCheckpoint(state: RunState, id: string): CheckpointState | undefined {
  return state.checkpoint?.id === id
    ? state.checkpoint
    : state.checkpoints.find((c) => c.id === id);
}

/**
 * The copies of a checkpoint's message in use: the newest row per chat. An older row of the same
 * chat was superseded by a re-post (its message was lost in a restart).
 */
export function currentCopies(rows: readonly CheckpointMessageRecord[]): CheckpointMessageRecord[] {
  const newest = new Map<string, CheckpointMessageRecord>();
  for (const row of rows) {
    const seen = newest.get(row.chatRef);
    if (!seen || row.id > seen.id) newest.set(row.chatRef, row);
  }
  return [...newest.values()].sort((a, b) => a.id - b.id);
}

/** True when `row` is the current copy of its checkpoint in its chat (not superseded). */
export async function isCurrentCopy(
  deps: ChatOpsDeps,
  row: CheckpointMessageRecord,
): Promise<boolean> {
  const rows = await deps.repos.checkpointMessages.listByCheckpoint(row.runId, row.checkpointId);
  return currentCopies(rows).some((r) => r.id === row.id);
}

/** Posts and edits checkpoint messages. */
export class CheckpointPresenter {
  readonly #deps: ChatOpsDeps;
  readonly #refusals: ChatRefusals;
  /** When this process started: a copy stored before it and never queued died with its process. */
  readonly #since: number;

  /** Uses the shared chatops dependencies; `refusals` acts on chats that refuse a message. */
  constructor(deps: ChatOpsDeps, refusals: ChatRefusals) {
    this.#deps = deps;
    this.#refusals = refusals;
    // The repositories stamp rows with Date.now (their default clock), so the same clock here.
    this.#since = Date.now();
  }

  /** Applies one run update's checkpoint events: new messages for opened, edits for changes. */
  async apply(
    state: RunState,
    events: readonly RunEvent[],
    chats: readonly string[],
  ): Promise<void> {
    const changed = new Set<string>();
    // A person's vote or decision: they are looking at the message they pressed.
    const pressed = events.some(byPerson);
    for (const e of events) {
      // Catching up on several commits, a checkpoint may have opened and closed meanwhile.
      if (e.type === 'checkpointOpened' && state.checkpoint?.id === e.checkpoint.id) {
        await this.post(state, state.checkpoint, chats);
      } else if (e.type === 'checkpointOpened') {
        changed.add(e.checkpoint.id);
      } else if ((CHANGES.has(e.type) || contentChanged(e)) && 'checkpointId' in e) {
        changed.add(e.checkpointId);
      }
      // A note kept for the decision: the open message counts it.
      else if (e.type === 'feedbackRecorded' && state.checkpoint) changed.add(state.checkpoint.id);
    }
    for (const id of changed) await this.refresh(state, id, pressed ? 'interactive' : 'decision');
  }

  /** Sends the open checkpoint's message to every chat that does not have a copy yet. */
  async post(state: RunState, cp: CheckpointState, chats: readonly string[]): Promise<void> {
    const copies = this.#deps.repos.checkpointMessages;
    const rows = await copies.listByCheckpoint(state.id, cp.id);
    const have = new Set<string>();
    for (const r of rows) {
      // Stored by a process that died before its send was queued: no message will ever carry
      // it, so it is dropped and the chat gets the message now (a queued send still arrives).
      const neverSent =
        r.messageRef === null &&
        r.state === 'open' &&
        r.createdAt < this.#since &&
        !(await copies.sendInFlight(r.id));
      if (neverSent && (await copies.removeUnsent(r.id))) continue;
      have.add(r.chatRef);
    }
    await this.#send(
      state,
      cp,
      chats.filter((c) => !have.has(c)),
      chats,
    );
  }

  /**
   * Sends the open checkpoint's message again to `chats`, whatever copies they had: their channel
   * lost its messages in a restart. The new copy (new token) supersedes the old ones.
   */
  async repost(state: RunState, cp: CheckpointState, chats: readonly string[]): Promise<void> {
    await this.#send(state, cp, chats, chats);
  }

  /** Sends to `chats`; `all` is every chat of the run (a thread falls back to its chat only when that one is not among them). */
  async #send(
    state: RunState,
    cp: CheckpointState,
    chats: readonly string[],
    all: readonly string[],
  ): Promise<void> {
    const { repos, log } = this.#deps;
    const targets = chats.filter((c) => channelFor(this.#deps, c) !== undefined);
    if (targets.length === 0) return;
    // The digest of what the message shows is recorded before the first copy goes out.
    const bound = await withDigest(this.#deps, state, cp);
    const view = await this.#view(state, bound, true);
    // Every chat at once: each waits only for its own chat's limits (the outbox paces per chat).
    const post = async (chat: string) => {
      try {
        // In the chat of `/run`, the person who started the run waits for it.
        const urgency = await urgencyIn(this.#deps, state.id, chat, 'decision');
        // Stored before sending, so a press racing the send finds its token.
        const row = await repos.checkpointMessages.add({
          runId: state.id,
          checkpointId: cp.id,
          chatRef: chat,
        });
        // One chat refusing does not stop the others: it is marked, people are told once.
        const ref = await this.#refusals.deliver(
          chat,
          (to) =>
            sendTo(this.#deps, to, {
              ...renderOpenCheckpoint(view, row.buttonToken, buttonsIn(this.#deps, chat)),
              urgency,
              // Whichever process delivers it, the copy learns its message id (owners.ts).
              owner: { kind: 'checkpoint', id: row.id },
            }),
          { runId: state.id, chats: all },
        );
        if (ref === undefined) await repos.checkpointMessages.removeUnsent(row.id);
        else await repos.checkpointMessages.setMessageRef(row.id, ref);
      } catch (err) {
        log.error(
          { err, runId: state.id, checkpoint: cp.id, chat },
          'chatops: could not post the checkpoint',
        );
      }
    };
    await Promise.all(targets.map(post));
  }

  /**
   * Edits every current copy of a checkpoint's message to its state; closes the rows when it
   * closed. `urgency`: `interactive` when a person's press or reply caused it (they wait for it).
   */
  async refresh(
    state: RunState,
    checkpointId: string,
    urgency: 'interactive' | 'decision' = 'decision',
  ): Promise<void> {
    const { repos, log } = this.#deps;
    const cp = findCheckpoint(state, checkpointId);
    if (!cp) return;
    const open = state.checkpoint?.id === cp.id;
    const list = async () =>
      currentCopies(await repos.checkpointMessages.listByCheckpoint(state.id, cp.id));
    // Superseded copies are not edited: their messages are gone with the restart that lost them.
    let rows = await list();
    if (!open) {
      // Closed before the edits: a copy whose send is confirmed later is then found closed by
      // the decision display (it looks after each confirmation); one confirmed since the read
      // above is edited here. (Closed after them, a confirmation meanwhile found it open.)
      const copies = repos.checkpointMessages;
      const expired = cp.decision !== undefined && byExpiry(cp.decision.by, cp.decision.reason);
      await (expired ? copies.markExpired(state.id, cp.id) : copies.markDecided(state.id, cp.id));
      const known = new Map((await list()).map((r) => [r.id, r.messageRef]));
      rows = rows.map((r) => ({ ...r, messageRef: r.messageRef ?? known.get(r.id) ?? null }));
    }
    const view = await this.#view(state, cp, open);
    const edit = async (row: (typeof rows)[number]) => {
      const channel = channelFor(this.#deps, row.chatRef);
      if (row.messageRef === null || !channel) return;
      const message = open
        ? renderOpenCheckpoint(view, row.buttonToken, { comment: channel.capabilities.modals })
        : renderClosedCheckpoint(view);
      // A closed copy's edit marks it shown when confirmed (a restart re-edits it until then).
      const owner = open ? {} : { owner: { kind: 'decision', id: row.id } as const };
      await channel
        .edit(row.messageRef, { ...message, urgency, ...owner })
        .then(async () => {
          // Shown (also where no outbox confirms it): no later start edits it again.
          if (!open) await repos.checkpointMessages.markShown(row.id);
        })
        .catch(async (err: unknown) => {
          const outcome = await this.#refusals.refused(row.chatRef, err, { runId: state.id });
          // The copy cannot show the decision (not editable any more, or its thread refuses):
          // the chat is told who decided in a new message, once (while the row is still open).
          const lost = outcome === undefined ? isGone(err) : 'retryAt' in outcome;
          if (!open && row.state === 'open' && lost) {
            await this.#postDecision(state, row, message, outcome, rows);
          } else if (outcome === undefined) {
            log.warn(
              { err, runId: state.id, checkpoint: cp.id, chat: row.chatRef },
              'chatops: could not edit a checkpoint copy',
            );
          }
        });
    };
    await Promise.all(rows.map(edit));
  }

  /**
   * Takes the buttons off a repeat of a copy's message (`strayRef`: a kill between the platform's
   * answer and the confirmation sent it twice; the bridge edits only the other one). Closed: it
   * shows the decision; open: the checkpoint without buttons, pointing at the copy. Found when
   * someone presses it (no platform lets a bot look it up); a failed edit waits for the next.
   */
  async closeStray(
    state: RunState,
    row: CheckpointMessageRecord,
    strayRef: string,
    urgency: 'interactive' | 'decision',
  ): Promise<void> {
    const cp = findCheckpoint(state, row.checkpointId);
    const channel = channelFor(this.#deps, row.chatRef);
    if (!cp || !channel) return;
    const open = state.checkpoint?.id === cp.id;
    const view = await this.#view(state, cp, open);
    let message = renderClosedCheckpoint(view);
    if (open) {
      const shown = renderOpenCheckpoint(view, row.buttonToken);
      message = { ...shown, text: [...shown.text, plain(REPEAT_NOTE)], buttons: [] };
    }
    // Not awaited: the press's handler does not wait for the chat's pace.
    void channel.edit(strayRef, { ...message, urgency }).catch((err: unknown) => {
      this.#deps.log.warn(
        { err, runId: state.id, checkpoint: cp.id, chat: row.chatRef },
        'chatops: could not take the buttons off a repeated checkpoint message',
      );
    });
  }

  /**
   * Posts a closed checkpoint's message for a copy whose message id never became known (the
   * process died before its send was queued, or the send failed): the chat is shown the decision
   * once (keyed by the copy), and the copy is then marked shown.
   */
  async postClosed(state: RunState, row: CheckpointMessageRecord): Promise<void> {
    const cp = findCheckpoint(state, row.checkpointId);
    if (!cp || state.checkpoint?.id === cp.id) return;
    const message = renderClosedCheckpoint(await this.#view(state, cp, false));
    await sendTo(this.#deps, row.chatRef, {
      ...message,
      urgency: 'decision',
      owner: { kind: 'decision', id: row.id },
      key: `decision:${row.id}`,
    });
  }

  /**
   * Posts a closed checkpoint's message anew for a copy that could not be edited: under the old
   * copy (its thread, a reply to it) when it is only not editable, else where the refusal says
   * (a closed or archived thread's chat). The old copy's buttons are answered "closed".
   */
  async #postDecision(
    state: RunState,
    row: CheckpointMessageRecord,
    message: OutgoingMessage,
    outcome: RefusalOutcome | undefined,
    copies: readonly CheckpointMessageRecord[],
  ): Promise<void> {
    const { log } = this.#deps;
    const decision: OutgoingMessage = { ...message, urgency: 'decision' };
    const context = { runId: state.id };
    const where = outcome && 'retryAt' in outcome ? outcome.retryAt : row.chatRef;
    // The thread's chat has a copy of its own, which shows the decision: one is enough.
    if (where !== row.chatRef && copies.some((c) => c.chatRef === where)) return;
    log.info(
      { runId: state.id, checkpoint: row.checkpointId, chat: row.chatRef, to: where },
      'chatops: checkpoint copy not editable, posting the decision anew',
    );
    try {
      if (where !== row.chatRef || row.messageRef === null) {
        await this.#refusals.deliver(where, (to) => sendTo(this.#deps, to, decision), context);
        return;
      }
      const replyTo = row.messageRef;
      await this.#refusals
        .deliver(where, (to) => sendTo(this.#deps, to, { ...decision, replyTo }), context)
        .catch((err: unknown) => {
          // The old copy is gone too (deleted): nothing to reply to, so the chat itself.
          if (!isGone(err)) throw err;
          return this.#refusals.deliver(where, (to) => sendTo(this.#deps, to, decision), context);
        });
    } catch (err) {
      log.error(
        { err, runId: state.id, checkpoint: row.checkpointId, chat: row.chatRef },
        'chatops: could not post the decision',
      );
    }
  }

  /** What the message shows: the checkpoint, where its log is and (for open ones) the output tail. */
  async #view(state: RunState, cp: CheckpointState, withTail: boolean): Promise<CheckpointView> {
    const view: CheckpointView = { runId: state.id, checkpoint: cp };
    const step = state.steps.find((s) => s.id === cp.stepId);
    const said = step?.directive?.reason;
    if (said && !cp.reason.includes(said)) view.agentReason = said;
    const perms = await declaredPermissions(this.#deps.repos, state, cp.stepId);
    if (perms !== undefined) view.permissions = describePermissions(perms);
    const def = state.workflow.steps.find((s) => s.id === cp.stepId);
    if (def !== undefined && cp.answers.includes('loop')) {
      view.changes = { used: state.loopCounters[cp.stepId] ?? 0, max: changesMax(def) };
    }
    const notes = state.checkpoint?.id === cp.id ? pendingNotes(state) : [];
    if (notes.length > 0) view.notes = notes.map((f) => f.by);
    // A `before` gate's step has not run (attempt 0): it has no log yet.
    if (!step || step.attempt === 0) return view;
    view.logs = runLink(this.#deps, state.id, step.id, step.attempt);
    if (!withTail) return view;
    let logPath: string;
    try {
      logPath = await this.#deps.orchestrator.logPath(state.id, step.id);
    } catch (err) {
      this.#deps.log.warn({ err, runId: state.id, step: step.id }, 'chatops: no log path');
      return view;
    }
    const tail = await readLogTail(state.workspace, logPath);
    if (tail !== undefined) view.outputTail = tail;
    const changed = readChangedFiles(state.workspace, logPath, step.id, step.attempt);
    if (changed !== undefined) view.changedFiles = changed;
    if (hasStepDiff(state, step)) view.diff = true;
    return view;
  }
}

/** The end of a repeated copy's message while its checkpoint is open (closeStray). */
const REPEAT_NOTE =
  '\n\n↪ This message was sent twice by a restart: answer on the other copy, which stays up to date.';

/** A vote or decision of a person (not the engine's expiry or withdrawal). */
function byPerson(e: RunEvent): boolean {
  if (e.type === 'checkpointVoted') return e.vote.actor.id !== SYSTEM_ACTOR.id;
  if (e.type === 'checkpointResolved') return e.decision.by.some((a) => a.id !== SYSTEM_ACTOR.id);
  return false;
}

/** A message the platform will not edit any more (deleted, or past its edit window). */
function isGone(err: unknown): boolean {
  return err instanceof PhasebridgeError && err.code === 'NOT_FOUND';
}

/** "Approve with comment" is offered where the chat's platform opens modals (Slack, Discord). */
function buttonsIn(deps: ChatOpsDeps, chat: string): ButtonOptions {
  return { comment: channelFor(deps, chat)?.capabilities.modals === true };
}
