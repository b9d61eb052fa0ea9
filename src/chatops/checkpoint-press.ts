/**
 * The checkpoint presenter's press side. Every press is checked in this order: the token is one
 * we issued, for this chat and message, and not of a copy superseded by a re-post; the presser
 * has the approver role here (refused without any detail of the run); the checkpoint is still
 * open; then the engine decides the vote (four-eyes, one vote per person) and its refusal is
 * passed on. The presser always gets a private answer.
 *
 * Reject asks for a reason: the prompt's message ref + the presser key a pending ask, and their
 * Reply to the prompt commits the reject. Pending asks are kept in bridge.db (`reason_prompts`),
 * so a reason typed after a restart still rejects; unanswered ones expire after an hour.
 */
import type { ButtonPress, Channel, Reply } from '../bridges/channel.ts';
import { prose } from '../bridges/render-text.ts';
import { closedMessage, evaluateVote } from '../engine/checkpoint-policy.ts';
import type { CheckpointAnswer } from '../engine/model.ts';
import { ANSWER_ROLE, hasRole, refusalText } from './authorize.ts';
import { parseButtonId, voteResultWords } from './checkpoint-message.ts';
import { type Access, audit, type ChatOpsDeps, channelFor, resolveAccess } from './context.ts';
import { findCheckpoint, isCurrentCopy } from './presenter.ts';
import { TOOL_PREFIX } from './tool-approval-message.ts';
import { ToolApprovalPresses } from './tool-approval-press.ts';

/** Unanswered reason prompts are dropped after this long. */
const PENDING_TTL_MS = 60 * 60 * 1000;

const INVALID_BUTTON = 'This button is not valid any more.';

/** Handles checkpoint button presses and the replies that carry a reject's reason. */
export class CheckpointPresses {
  readonly #deps: ChatOpsDeps;
  readonly #tools: ToolApprovalPresses | undefined;

  /** Uses the shared chatops dependencies; tool approval buttons and reasons go to `tools`. */
  constructor(deps: ChatOpsDeps, tools?: ToolApprovalPresses) {
    this.#deps = deps;
    this.#tools = tools;
  }

  /** Handles one press; always answers the presser privately. */
  async press(ev: ButtonPress): Promise<void> {
    if (this.#tools && ToolApprovalPresses.isToolButton(ev.token)) return this.#tools.press(ev);
    const channel = this.#deps.channels.get(ev.interaction.platform);
    if (!channel) return;
    const say = (text: string) => channel.answer(ev.interaction, text, { private: true });
    const access = await resolveAccess(this.#deps, ev.chatRef, ev.threadRef, ev.user);
    const note = (outcome: 'allowed' | 'refused' | 'failed', detail: string, target?: string) =>
      audit(this.#deps, {
        actor: access.actor,
        action: 'button',
        chatRef: ev.chatRef,
        outcome,
        key: ev.idempotencyKey,
        detail,
        ...(target !== undefined && { target }),
      });
    const parsed = parseButtonId(ev.token);
    const row = parsed ? await this.#deps.repos.checkpointMessages.findByToken(parsed.token) : null;
    // A token of another chat or message is treated exactly like an unknown one.
    if (
      !parsed ||
      !row ||
      row.chatRef !== ev.chatRef ||
      (row.messageRef !== null && row.messageRef !== ev.messageRef)
    ) {
      await note('refused', 'unknown or foreign button token');
      return say(INVALID_BUTTON);
    }
    // A message re-posted after a restart carries a new token; the lost copy's token is void.
    if (!(await isCurrentCopy(this.#deps, row))) {
      await note('refused', 'button of a superseded checkpoint message', row.runId);
      return say(INVALID_BUTTON);
    }
    if (access.binding === null || !hasRole(access.role, ANSWER_ROLE)) {
      await note('refused', `role ${access.role ?? 'none'}, needs ${ANSWER_ROLE}`, row.runId);
      return say(refusalText('answer'));
    }
    const state = await this.#deps.orchestrator.getRun(row.runId);
    const cp = findCheckpoint(state, row.checkpointId);
    if (!cp || state.checkpoint?.id !== cp.id) {
      const text = cp ? closedMessage(cp) : `checkpoint ${row.checkpointId} is closed`;
      await note('failed', text, row.runId);
      return say(capital(text));
    }
    if (parsed.answer === 'reject') {
      const vote = evaluateVote(cp, state.startedBy, access.actor, 'reject');
      if (!vote.ok) {
        await note('failed', vote.rejection.message, row.runId);
        return say(capital(vote.rejection.message));
      }
      await say('Reply to the prompt below with your reason to reject.');
      const prompt = `why do you reject checkpoint ${cp.id} of run ${row.runId}? Reply with your reason.`;
      const promptRef = await channel.askForReason(ev.interaction, prompt);
      const askedAt = this.#deps.clock().getTime();
      const prompts = this.#deps.repos.reasonPrompts;
      await prompts.deleteExpired(askedAt);
      await prompts.add({
        promptRef,
        platform: ev.user.platform,
        userId: ev.user.id,
        runId: row.runId,
        checkpointId: cp.id,
        askedAt,
        expiresAt: askedAt + PENDING_TTL_MS,
      });
      await note('allowed', `reject of ${cp.id}: asked for the reason`, row.runId);
      return;
    }
    const text = await this.#vote(access, ev.idempotencyKey, row.runId, cp.id, parsed.answer);
    await note(
      text.ok ? 'allowed' : 'failed',
      `${parsed.answer} ${cp.id}: ${text.text}`,
      row.runId,
    );
    return say(capital(text.text));
  }

  /** Handles a Reply; true when it answered one of our reason prompts (the reject is committed). */
  async reply(ev: Reply): Promise<boolean> {
    const pending = await this.#deps.repos.reasonPrompts.take(
      ev.replyToMessageRef,
      ev.user.platform,
      ev.user.id,
      this.#deps.clock().getTime(),
    );
    if (!pending) return false;
    if (pending.checkpointId.startsWith(TOOL_PREFIX) && this.#tools) {
      await this.#tools.reply(pending, ev);
      return true;
    }
    const access = await resolveAccess(this.#deps, ev.chatRef, ev.threadRef, ev.user);
    const channel = channelFor(this.#deps, ev.chatRef);
    const base = {
      actor: access.actor,
      action: 'reply:reject',
      chatRef: ev.chatRef,
      key: ev.idempotencyKey,
      target: pending.runId,
    };
    // The role is checked again: it may have been removed while the prompt was open.
    if (access.binding === null || !hasRole(access.role, ANSWER_ROLE)) {
      await audit(this.#deps, {
        ...base,
        outcome: 'refused',
        detail: `role ${access.role ?? 'none'}`,
      });
      await channel?.send(ev.chatRef, { text: prose(refusalText('answer')) });
      return true;
    }
    const result = await this.#vote(
      access,
      ev.idempotencyKey,
      pending.runId,
      pending.checkpointId,
      'reject',
      ev.text,
    );
    await audit(this.#deps, {
      ...base,
      outcome: result.ok ? 'allowed' : 'failed',
      detail: result.text,
    });
    // On success the checkpoint copies are edited and the run's end is announced; say nothing more.
    if (!result.ok) await sendText(channel, ev.chatRef, `Could not reject: ${result.text}`);
    return true;
  }

  async #vote(
    access: Access,
    key: string,
    runId: string,
    checkpointId: string,
    answer: CheckpointAnswer,
    reason?: string,
  ): Promise<{ ok: boolean; text: string }> {
    const result = await this.#deps.orchestrator.command(runId, key, {
      type: 'answerCheckpoint',
      checkpointId,
      answer,
      actor: access.actor,
      ...(reason !== undefined && { reason }),
    });
    if (!result.ok) return { ok: false, text: result.rejection.message };
    const cp = findCheckpoint(result.state, checkpointId);
    return { ok: true, text: cp ? voteResultWords(cp) : `${answer} recorded` };
  }
}

const capital = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1);

async function sendText(
  channel: Channel | undefined,
  chatRef: string,
  text: string,
): Promise<void> {
  await channel?.send(chatRef, { text: prose(text) });
}
