/**
 * Tool approvals in chat, press side: the same checks as checkpoint buttons (our token, this
 * chat and message, the approver role; a viewer is refused without detail), then Allow once,
 * Allow for this run (the tool, or the command prefix) or Deny, which asks for the reason first
 * (a Reply to the prompt; kept in reason_prompts like a checkpoint reject). Each request is
 * decided once; every copy in every chat is then edited. Every press is audited. With four-eyes
 * the run's starter may not allow (only deny) its tool requests.
 */
import type { ButtonPress, Reply } from '../bridges/events.ts';
import { prose } from '../bridges/render-text.ts';
import type { ReasonPromptRecord } from '../db/repositories/reason-prompts.ts';
import type { ToolApprovalRecord } from '../db/repositories/tool-approvals.ts';
import { type Actor, samePerson } from '../engine/model.ts';
import { ANSWER_ROLE, hasRole, refusalText } from './authorize.ts';
import {
  accessOfEvent,
  audit,
  type ChatOpsDeps,
  channelFor,
  pressContext,
  rememberRunMessage,
} from './context.ts';
import { declaredPermissions } from './step-permissions.ts';
import { parseToolButton, TOOL_PREFIX } from './tool-approval-message.ts';
import { ruleOf, type ToolApprovalPresenter } from './tool-approval-presenter.ts';

/** How long a Deny waits for its reason. */
const REASON_TTL_MS = 60 * 60 * 1000;

/** Handles tool approval presses and the replies that carry a Deny's reason. */
export class ToolApprovalPresses {
  readonly #deps: ChatOpsDeps;
  readonly #presenter: ToolApprovalPresenter;

  constructor(deps: ChatOpsDeps, presenter: ToolApprovalPresenter) {
    this.#deps = deps;
    this.#presenter = presenter;
  }

  /** True when `token` is a tool approval button id. */
  static isToolButton(token: string): boolean {
    return parseToolButton(token) !== undefined;
  }

  /** Handles one press; always answers the presser privately. */
  async press(ev: ButtonPress): Promise<void> {
    const ctx = await pressContext(this.#deps, ev, 'button:tool');
    if (!ctx) return;
    const { channel, say, access, note } = ctx;
    const parsed = parseToolButton(ev.token);
    const row = parsed ? await this.#deps.repos.checkpointMessages.findByToken(parsed.token) : null;
    if (
      !parsed ||
      !row?.checkpointId.startsWith(TOOL_PREFIX) ||
      row.chatRef !== ev.chatRef ||
      (row.messageRef !== null && row.messageRef !== ev.messageRef)
    ) {
      await note('refused', 'unknown or foreign button token');
      return say('This button is not valid any more.');
    }
    if (access.binding === null || !hasRole(access.role, ANSWER_ROLE)) {
      await note('refused', `role ${access.role ?? 'none'}, needs ${ANSWER_ROLE}`, row.runId);
      return say(refusalText('answer'));
    }
    const id = row.checkpointId.slice(TOOL_PREFIX.length);
    const request = await this.#deps.repos.toolApprovals.get(id);
    if (request === null || request.status !== 'pending') {
      await note('failed', `tool request ${id} already decided`, row.runId);
      return say('This request was already decided.');
    }
    const by = access.actor.id;
    if (parsed.answer === 'deny') {
      await say(
        'Reply to the prompt below with your reason to deny (it is returned to the agent).',
      );
      const promptRef = await channel.askForReason(
        ev.interaction,
        `why do you deny ${request.summary}? Reply with your reason.`,
      );
      const askedAt = this.#deps.clock().getTime();
      await this.#deps.repos.reasonPrompts.add({
        promptRef,
        platform: ev.user.platform,
        userId: ev.user.id,
        runId: row.runId,
        checkpointId: row.checkpointId,
        // A deny's reason: dispatched on the tool prefix before the answer is looked at.
        answer: 'reject',
        askedAt,
        expiresAt: askedAt + REASON_TTL_MS,
      });
      await rememberRunMessage(this.#deps, promptRef, row.runId, 'prompt');
      await note('allowed', `deny of ${id}: asked for the reason`, row.runId);
      return;
    }
    const refusal = await this.#fourEyes(request, access.actor);
    if (refusal !== null) {
      await note('refused', `four-eyes: ${by} started run ${request.runId}`, row.runId);
      return say(refusal);
    }
    const answer =
      parsed.answer === 'once'
        ? ({ allow: true, scope: 'once' } as const)
        : ({ allow: true, scope: 'run', rule: ruleOf(request) } as const);
    const decided = await this.#deps.repos.toolApprovals.decide(id, answer, by);
    await note(decided ? 'allowed' : 'failed', `${parsed.answer} ${id}`, row.runId);
    if (!decided) return say('This request was already decided.');
    await this.#closeCopies(id);
    return say(
      parsed.answer === 'once'
        ? 'Allowed once.'
        : `Allowed for this run (${answer.scope === 'run' ? answer.rule : ''}).`,
    );
  }

  /** The Reply to a Deny prompt (taken from reason_prompts by the checkpoint side). */
  async reply(pending: ReasonPromptRecord, ev: Reply): Promise<void> {
    const access = await accessOfEvent(this.#deps, ev);
    const channel = channelFor(this.#deps, ev.chatRef);
    const id = pending.checkpointId.slice(TOOL_PREFIX.length);
    const base = {
      actor: access.actor,
      action: 'reply:deny-tool',
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
      await channel?.send(ev.chatRef, {
        text: prose(refusalText('answer')),
        urgency: 'interactive',
      });
      return;
    }
    const reason = ev.text.trim();
    if (reason === '') {
      await channel?.send(ev.chatRef, {
        text: prose('A reason is required to deny; press Deny again.'),
        urgency: 'interactive',
      });
      return;
    }
    const decided = await this.#deps.repos.toolApprovals.decide(
      id,
      { allow: false, reason },
      access.actor.id,
    );
    await audit(this.#deps, {
      ...base,
      outcome: decided ? 'allowed' : 'failed',
      detail: `deny ${id}: ${reason}`,
    });
    if (!decided) {
      await channel?.send(ev.chatRef, {
        text: prose('Could not deny: the request was already decided.'),
        urgency: 'interactive',
      });
      return;
    }
    await this.#closeCopies(id);
  }

  /**
   * The four-eyes rule of the step's `permissions: {mode: ask, fourEyes: true}` (workflow or
   * named agent): the run's starter may not allow its tool requests; Deny stays open to them.
   */
  async #fourEyes(request: ToolApprovalRecord, actor: Actor): Promise<string | null> {
    const state = await this.#deps.orchestrator.getRun(request.runId);
    const perms = await declaredPermissions(this.#deps.repos, state, request.stepId);
    // The person counts: the starter on Slack cannot allow on Telegram (linked identities).
    if (perms?.fourEyes !== true || !samePerson(actor, state.startedBy)) return null;
    return `Four-eyes rule: you started run ${request.runId}, so you cannot allow its tool requests; another approver must (you may still Deny).`;
  }

  async #closeCopies(id: string): Promise<void> {
    const request = await this.#deps.repos.toolApprovals.get(id);
    if (request !== null) await this.#presenter.refresh(request);
  }
}
