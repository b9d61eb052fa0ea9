/**
 * The checkpoint presenter's press side. Every press is checked in this order: the token is one
 * we issued, for this chat and message, and not of a copy superseded by a re-post; the presser
 * has the approver role here (refused without any detail of the run); the checkpoint is still
 * open; then the engine decides the vote (four-eyes, one vote per person) and its refusal is
 * passed on. The presser always gets a private answer.
 *
 * Reject and Request changes ask for a reason: the prompt's message ref + the presser key a
 * pending ask, and their Reply to the prompt commits the answer. Pending asks are kept in
 * bridge.db (`reason_prompts`, with the answer), so a reason typed after a restart still counts;
 * unanswered ones expire after an hour. "Approve with comment" (chats with modals) asks the same
 * way for an optional comment, committed as the approval's reason (as `approve --comment`; empty:
 * a plain approve). An empty reason decides nothing: it is answered out loud and its prompt stays
 * open. A Request changes at the step's loop max is refused at
 * the press, with the limit, before anyone types a reason. The replies are reason-replies.ts.
 */
import type { ButtonPress, Reply } from '../bridges/events.ts';
import type { CheckpointMessageRecord } from '../db/repositories/index.ts';
import type { ReasonPromptRecord } from '../db/repositories/reason-prompts.ts';
import { changesRefusal, closedMessage, evaluateVote } from '../engine/checkpoint-policy.ts';
import type { CheckpointAnswer, CheckpointState, RunState } from '../engine/model.ts';
import { ANSWER_ROLE, hasRole, refusalText } from './authorize.ts';
import { type ParsedButton, parseButtonId } from './checkpoint-message.ts';
import { voteOnCheckpoint } from './checkpoint-vote.ts';
import {
  type ChatOpsDeps,
  type PressContext,
  pressContext,
  rememberRunMessage,
} from './context.ts';
import { checkDigest } from './digest-check.ts';
import { sendStepDiff } from './handlers/diff.ts';
import { findCheckpoint, isCurrentCopy } from './presenter.ts';
import { ReasonReplies } from './reason-replies.ts';
import { ToolApprovalPresses } from './tool-approval-press.ts';

/** Unanswered reason prompts are dropped after this long. */
const PENDING_TTL_MS = 60 * 60 * 1000;

const INVALID_BUTTON = 'This button is not valid any more.';

/** The presser's private answer to "Approve with comment" (the modal opens beside it). */
const COMMENT_ASKED =
  'Write your comment in the dialog: it goes to the next step with your approval. Send it empty to approve without one.';
/** The comment modal: its title, its field, and that the field may stay empty. */
const COMMENT_ASK = { title: 'Approve with comment', label: 'Comment', optional: true } as const;

/** What a press puts right in the chat besides its own answer (ChatOps wires the presenter). */
export interface PressHooks {
  /** Takes the buttons off a repeat of a copy's message (CheckpointPresenter.closeStray). */
  repeat?(state: RunState, row: CheckpointMessageRecord, repeatRef: string): Promise<void>;
  /** Shows the decision on the copies of `row`'s closed checkpoint (in the run's order). */
  stale?(row: CheckpointMessageRecord): void;
}

/** Handles checkpoint button presses and the replies that carry a reject's reason. */
export class CheckpointPresses {
  readonly #deps: ChatOpsDeps;
  readonly #tools: ToolApprovalPresses | undefined;
  readonly #hooks: PressHooks;
  readonly #replies: ReasonReplies;

  /**
   * Uses the shared chatops dependencies; tool approval buttons and reasons go to `tools`; a
   * press on a repeat of a copy's message (sent twice by a kill) is handled as one on the copy,
   * then `hooks.repeat` takes the repeat's buttons off; a press on a copy of a closed checkpoint
   * that bridge.db still has open (killed before its edit) calls `hooks.stale`.
   */
  constructor(deps: ChatOpsDeps, tools?: ToolApprovalPresses, hooks: PressHooks = {}) {
    this.#deps = deps;
    this.#tools = tools;
    this.#hooks = hooks;
    this.#replies = new ReasonReplies(deps, tools);
  }

  /** Handles one press; always answers the presser privately. */
  async press(ev: ButtonPress): Promise<void> {
    if (this.#tools && ToolApprovalPresses.isToolButton(ev.token)) return this.#tools.press(ev);
    const ctx = await pressContext(this.#deps, ev, 'button');
    if (!ctx) return;
    const { say, note } = ctx;
    const copies = this.#deps.repos.checkpointMessages;
    const parsed = parseButtonId(ev.token);
    const row = parsed ? await copies.findByToken(parsed.token) : null;
    // Another message carrying the copy's token is a repeat of its send only when the outbox
    // handed that send over more than once (a kill in the send window); otherwise foreign.
    const repeat =
      row !== null &&
      row.chatRef === ev.chatRef &&
      row.messageRef !== null &&
      row.messageRef !== ev.messageRef &&
      (await copies.sendRepeated(row.id));
    // A token of another chat or message is treated exactly like an unknown one.
    if (
      !parsed ||
      !row ||
      row.chatRef !== ev.chatRef ||
      (row.messageRef !== null && row.messageRef !== ev.messageRef && !repeat)
    ) {
      await note('refused', 'unknown or foreign button token');
      return say(INVALID_BUTTON);
    }
    if (!repeat) return this.#pressCopy(ctx, ev, parsed, row);
    try {
      await this.#pressCopy(ctx, ev, parsed, row);
    } finally {
      // The repeat is no copy the bridge edits: its buttons go now (closed: it shows the decision).
      const state = await this.#deps.orchestrator.getRun(row.runId);
      await this.#hooks.repeat?.(state, row, ev.messageRef);
    }
  }

  /** A press on a copy of a checkpoint message (its token checked for this chat and message). */
  async #pressCopy(
    ctx: PressContext,
    ev: ButtonPress,
    parsed: ParsedButton,
    row: CheckpointMessageRecord,
  ): Promise<void> {
    const { channel, say, access, note } = ctx;
    // A message re-posted after a restart carries a new token; the lost copy's token is void.
    if (!(await isCurrentCopy(this.#deps, row))) {
      await note('refused', 'button of a superseded checkpoint message', row.runId);
      return say(INVALID_BUTTON);
    }
    if (parsed.answer === 'diff') return this.#diff(ctx, row);
    if (access.binding === null || !hasRole(access.role, ANSWER_ROLE)) {
      await note('refused', `role ${access.role ?? 'none'}, needs ${ANSWER_ROLE}`, row.runId);
      return say(refusalText('answer'));
    }
    const state = await this.#deps.orchestrator.getRun(row.runId);
    const cp = findCheckpoint(state, row.checkpointId);
    if (!cp || state.checkpoint?.id !== cp.id) {
      const text = cp ? closedMessage(cp) : `checkpoint ${row.checkpointId} is closed`;
      await note('failed', text, row.runId);
      await say(capital(text));
      // Still open here: the decision's edit never came (a kill between the two); it goes now.
      if (cp && row.state === 'open') this.#hooks.stale?.(row);
      return;
    }
    if (parsed.comment === true) {
      const vote = evaluateVote(cp, state.startedBy, access.actor, 'approve');
      if (!vote.ok) {
        await note('failed', vote.rejection.message, row.runId);
        return say(capital(vote.rejection.message));
      }
      await say(COMMENT_ASKED);
      const prompt = `your comment on approving checkpoint ${cp.id} of run ${row.runId} goes to the next step's agent with the approval. Leave it empty to approve without one.`;
      const promptRef = await channel.askForReason(ev.interaction, prompt, COMMENT_ASK);
      await this.#ask(promptRef, ev, row.runId, cp.id, 'approve');
      await note('allowed', `approve of ${cp.id}: asked for the comment`, row.runId);
      return;
    }
    if (parsed.answer === 'reject' || parsed.answer === 'loop') {
      const answer = parsed.answer;
      const vote = evaluateVote(cp, state.startedBy, access.actor, answer);
      const refusal = vote.ok ? limitRefusal(state, cp, answer) : vote.rejection.message;
      if (refusal !== null) {
        await note('failed', refusal, row.runId);
        return say(capital(refusal));
      }
      await say(
        answer === 'reject'
          ? 'Reply to the prompt below with your reason to reject.'
          : 'Reply to the prompt below with what should change.',
      );
      const prompt =
        answer === 'reject'
          ? `why do you reject checkpoint ${cp.id} of run ${row.runId}? Reply with your reason.`
          : `what should change at checkpoint ${cp.id} of run ${row.runId}? Reply with your request; the agent gets it.`;
      const promptRef = await channel.askForReason(ev.interaction, prompt);
      await this.#ask(promptRef, ev, row.runId, cp.id, answer);
      await note('allowed', `${answer} of ${cp.id}: asked for the reason`, row.runId);
      return;
    }
    // Approve exactly what was shown: the content is hashed again, a change is refused out loud.
    const bound = await checkDigest(this.#deps, state, cp);
    if (bound?.ok === false) {
      await note('refused', `approve ${cp.id}: ${bound.text}`, row.runId);
      return say(bound.text);
    }
    const text = await voteOnCheckpoint(
      this.#deps,
      access,
      ev.idempotencyKey,
      row.runId,
      cp.id,
      parsed.answer,
      {
        digest: bound?.digest,
      },
    );
    const content = bound === undefined ? '' : ` (content ${bound.label}, sha256 ${bound.digest})`;
    await note(
      text.ok ? 'allowed' : 'failed',
      `${parsed.answer} ${cp.id}: ${text.text}${content}`,
      row.runId,
    );
    return say(capital(text.text));
  }

  /** Handles a Reply; true when it answered one of our reason prompts (reason-replies.ts). */
  reply(ev: Reply): Promise<boolean> {
    return this.#replies.reply(ev);
  }

  /** Keeps the ask open (bridge.db) until the presser's text answers it, or it expires. */
  async #ask(
    promptRef: string,
    ev: ButtonPress,
    runId: string,
    checkpointId: string,
    answer: ReasonPromptRecord['answer'],
  ): Promise<void> {
    const askedAt = this.#deps.clock().getTime();
    const prompts = this.#deps.repos.reasonPrompts;
    await prompts.deleteExpired(askedAt);
    await prompts.add({
      promptRef,
      platform: ev.user.platform,
      userId: ev.user.id,
      runId,
      checkpointId,
      answer,
      askedAt,
      expiresAt: askedAt + PENDING_TTL_MS,
    });
    // Once its row is gone (expired, swept), a reply to the prompt is still told so (issue 29).
    await rememberRunMessage(this.#deps, promptRef, runId, 'prompt');
  }

  /** Diff: any viewer gets the step's diff as a file in the chat; nothing changes. */
  async #diff(ctx: PressContext, row: CheckpointMessageRecord): Promise<void> {
    const { access, say, note } = ctx;
    if (access.binding === null || !hasRole(access.role, 'viewer')) {
      await note('refused', `diff: role ${access.role ?? 'none'}, needs viewer`, row.runId);
      return say(refusalText('diff'));
    }
    const state = await this.#deps.orchestrator.getRun(row.runId);
    const cp = findCheckpoint(state, row.checkpointId);
    const step = cp && state.steps.find((s) => s.id === cp.stepId);
    if (!step) {
      await note('failed', `diff: no step for ${row.checkpointId}`, row.runId);
      return say(`Checkpoint ${row.checkpointId} has no step to show.`);
    }
    const sent = await sendStepDiff(this.#deps, row.chatRef, state, step);
    await note(sent.sent ? 'allowed' : 'failed', `diff ${step.id}#${step.attempt}`, row.runId);
    return say(sent.text);
  }
}

/** Why a Request changes cannot be asked for now (the step's max is used up), or null. */
function limitRefusal(state: RunState, cp: CheckpointState, answer: CheckpointAnswer) {
  if (answer !== 'loop') return null;
  const def = state.workflow.steps.find((s) => s.id === cp.stepId);
  if (def === undefined) return null;
  return changesRefusal(def, state.loopCounters[cp.stepId] ?? 0, cp.id);
}

const capital = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1);
