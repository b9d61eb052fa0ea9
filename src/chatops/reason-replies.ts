/**
 * The replies that answer a checkpoint press's question (checkpoint-press.ts): a reject's reason,
 * a request for changes, an approval's comment, committed as the presser's vote; an empty reason
 * decides nothing, and a reply to a question asked of someone else, or expired, is told so.
 */
import type { Channel } from '../bridges/channel.ts';
import type { Reply } from '../bridges/events.ts';
import { prose } from '../bridges/render-text.ts';
import type { ReasonPromptRecord } from '../db/repositories/reason-prompts.ts';
import type { CheckpointAnswer } from '../engine/model.ts';
import { peopleNames } from '../engine/person-name.ts';
import { ANSWER_ROLE, hasRole, refusalText } from './authorize.ts';
import { voteOnCheckpoint } from './checkpoint-vote.ts';
import { accessOfEvent, audit, type ChatOpsDeps, channelFor } from './context.ts';
import { checkDigest } from './digest-check.ts';
import { findCheckpoint } from './presenter.ts';
import { TOOL_PREFIX } from './tool-approval-message.ts';
import type { ToolApprovalPresses } from './tool-approval-press.ts';

/** What failed, in the answer to a reason or comment that could not be committed. */
const WHAT: Readonly<Record<CheckpointAnswer, string>> = {
  reject: 'reject',
  loop: 'request changes',
  approve: 'approve',
};

/** Commits the answers typed to the questions checkpoint presses asked. */
export class ReasonReplies {
  readonly #deps: ChatOpsDeps;
  readonly #tools: ToolApprovalPresses | undefined;

  /** Uses the shared chatops dependencies; answers to tool approvals' questions go to `tools`. */
  constructor(deps: ChatOpsDeps, tools?: ToolApprovalPresses) {
    this.#deps = deps;
    this.#tools = tools;
  }

  /** Handles a Reply; true when it answered one of our reason prompts (the answer is committed). */
  async reply(ev: Reply): Promise<boolean> {
    const prompts = this.#deps.repos.reasonPrompts;
    const ask = [ev.replyToMessageRef, ev.user.platform, ev.user.id] as const;
    // Read, not claimed: closed once handled, so an answer whose process died before its vote
    // was committed (a leader killed) finds its prompt open when it is delivered again.
    const pending = await prompts.find(...ask, this.#deps.clock().getTime());
    if (!pending) return this.#notTaken(ev);
    // Only an approval's comment may be empty; an empty reason leaves the prompt open, and the
    // person is told so (issue 29: what a human writes is never silently nothing).
    if (ev.text.trim() === '' && pending.answer !== 'approve') {
      const channel = channelFor(this.#deps, ev.chatRef);
      await sendText(channel, ev.chatRef, emptyReasonWords(pending));
      return true;
    }
    try {
      return await this.#answer(pending, ev);
    } finally {
      await prompts.take(...ask, 0).catch((err: unknown) => {
        this.#deps.log.warn({ err }, 'chatops: an answered reason prompt was not closed');
      });
    }
  }

  /** Applies the answer `pending` waited for: a tool's, or a vote with its reason or comment. */
  async #answer(pending: ReasonPromptRecord, ev: Reply): Promise<true> {
    if (pending.checkpointId.startsWith(TOOL_PREFIX) && this.#tools) {
      await this.#tools.reply(pending, ev);
      return true;
    }
    const access = await accessOfEvent(this.#deps, ev);
    const channel = channelFor(this.#deps, ev.chatRef);
    const base = {
      actor: access.actor,
      action: `reply:${pending.answer}`,
      chatRef: ev.chatRef,
      key: ev.idempotencyKey,
      target: pending.runId,
    };
    // The role is checked again: it may have been removed while the prompt was open.
    if (access.binding === null || !hasRole(access.role, ANSWER_ROLE)) {
      const detail = `role ${access.role ?? 'none'}`;
      await audit(this.#deps, { ...base, outcome: 'refused', detail });
      await sendText(channel, ev.chatRef, refusalText('answer'));
      return true;
    }
    // An approval's comment is its reason, as `approve --comment` makes it; empty: a plain approve.
    const words = pending.answer === 'approve' ? ev.text.trim() || undefined : ev.text;
    // An approval with a comment approves what was shown, as a plain press does.
    let digest: string | undefined;
    if (pending.answer === 'approve') {
      const state = await this.#deps.orchestrator.getRun(pending.runId);
      const cp = findCheckpoint(state, pending.checkpointId);
      const bound =
        cp && state.checkpoint?.id === cp.id ? await checkDigest(this.#deps, state, cp) : undefined;
      if (bound?.ok === false) {
        await audit(this.#deps, { ...base, outcome: 'refused', detail: bound.text });
        await sendText(channel, ev.chatRef, bound.text);
        return true;
      }
      digest = bound?.digest;
    }
    const result = await voteOnCheckpoint(
      this.#deps,
      access,
      ev.idempotencyKey,
      pending.runId,
      pending.checkpointId,
      pending.answer,
      words === undefined ? { digest } : { reason: words, digest },
    );
    await audit(this.#deps, {
      ...base,
      outcome: result.ok ? 'allowed' : 'failed',
      detail: result.text,
    });
    // On success the checkpoint copies are edited and the run's end is announced; say nothing more.
    const what = WHAT[pending.answer];
    if (!result.ok) await sendText(channel, ev.chatRef, `Could not ${what}: ${result.text}`);
    return true;
  }

  /**
   * A reply to one of our questions that is not an answer to it: the question asks someone else,
   * or it expired. Said out loud (never silently dropped, issue 29); false when it is no question.
   */
  async #notTaken(ev: Reply): Promise<boolean> {
    const asked = await this.#deps.repos.reasonPrompts.listByPrompt(ev.replyToMessageRef);
    const first = asked[0];
    if (first === undefined) return false;
    const mine = asked.find((p) => p.platform === ev.user.platform && p.userId === ev.user.id);
    const ids = asked.map((p) => `${p.platform}:${p.userId}`);
    const people = await this.#deps.repos.people.lookup(ids);
    const askedOf = peopleNames(ids.map((id) => people.get(id) ?? { id }));
    const expired = mine !== undefined;
    const text = expired
      ? `That question about run ${first.runId} expired, so your answer decided nothing: press the button again to answer.`
      : `That question about run ${first.runId} is for ${askedOf}; your reply was not passed on. To guide the run, reply to its status or checkpoint message.`;
    const access = await accessOfEvent(this.#deps, ev);
    await audit(this.#deps, {
      actor: access.actor,
      action: `reply:${first.answer}`,
      chatRef: ev.chatRef,
      key: ev.idempotencyKey,
      target: first.runId,
      outcome: 'refused',
      detail: expired ? 'the question expired' : `the question is for ${askedOf}`,
    });
    await sendText(channelFor(this.#deps, ev.chatRef), ev.chatRef, text);
    return true;
  }
}

/** The answer to an empty reason: nothing was decided, and the question is still open. */
function emptyReasonWords(pending: ReasonPromptRecord): string {
  const name = pending.checkpointId.startsWith(TOOL_PREFIX)
    ? `deny the tool request of run ${pending.runId}`
    : `${pending.answer === 'loop' ? 'request changes at' : 'reject'} checkpoint ${pending.checkpointId} of run ${pending.runId}`;
  return `Your answer was empty, so nothing was decided: to ${name}, answer the question again with your reason.`;
}

async function sendText(
  channel: Channel | undefined,
  chatRef: string,
  text: string,
): Promise<void> {
  // The answer to the reason the person just typed: they wait for it.
  await channel?.send(chatRef, { text: prose(text), urgency: 'interactive' });
}
