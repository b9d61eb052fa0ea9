/**
 * Checkpoint rules, pure: which answers a checkpoint offers, its policy, and how one vote
 * changes it (distinct approvers, four-eyes, one vote per person, a single reject decides). A
 * person is an identity and the identities linked to it (`Actor.sameAs`), so one person pressing
 * on two platforms is one vote and the starter on Slack cannot approve on Telegram.
 */

import type { Rejection } from './events.ts';
import type {
  Actor,
  CheckpointAnswer,
  CheckpointKind,
  CheckpointPolicy,
  CheckpointState,
} from './model.ts';
import { DEFAULT_CHANGES_MAX, samePerson } from './model.ts';
import { personName } from './person-name.ts';
import type { StepCheckpoint, WorkflowStep } from './workflow/types.ts';

/** Policy of a checkpoint without configuration: one approval, no four-eyes, never expires. */
export const DEFAULT_CHECKPOINT_POLICY: CheckpointPolicy = Object.freeze({
  approvals: 1,
  fourEyes: false,
  onExpiry: 'keep',
});

/** The policy a step's checkpoint configuration gives (the default when it has none). */
export function policyFor(config: StepCheckpoint | undefined): CheckpointPolicy {
  if (!config) return { ...DEFAULT_CHECKPOINT_POLICY };
  const policy: CheckpointPolicy = {
    approvals: config.approvals,
    fourEyes: config.fourEyes,
    onExpiry: config.onExpiry,
  };
  if (config.expiresInMs !== undefined) policy.expiresInMs = config.expiresInMs;
  return policy;
}

/**
 * Answers offered: approve and reject always; `loop` (Request changes) after a step ran (kinds
 * 'after' and 'directive') and at a `before` gate with an earlier step to send back to, unless the
 * step's checkpoint turns it off. Not at a loop-limit checkpoint (going back again is what it
 * asks a human about); at a closed PABCD gate only along the step's declared loop (the phase
 * rules allow those moves). The loop max is checked when answered,
 * so the button stays and a press at the limit is refused with the reason.
 */
export function checkpointAnswers(
  kind: CheckpointKind,
  step: WorkflowStep,
  hasEarlierStep: boolean,
  gate = false,
): CheckpointAnswer[] {
  const offered =
    step.checkpoint?.requestChanges !== false &&
    (!gate || step.loop !== undefined) &&
    (kind === 'after' || kind === 'directive' || (kind === 'before' && hasEarlierStep));
  return offered ? ['approve', 'reject', 'loop'] : ['approve', 'reject'];
}

/** How many Request changes (and loops) the step allows: its `loop.max`, else the default. */
export function changesMax(step: WorkflowStep): number {
  return step.loop?.max ?? DEFAULT_CHANGES_MAX;
}

/** Why Request changes is refused: the step went back `used` times, its max; null when it may. */
export function changesRefusal(step: WorkflowStep, used: number, checkpointId: string) {
  const max = changesMax(step);
  if (used < max) return null;
  return `step ${step.id} already went back ${used} time${used === 1 ? '' : 's'}, its limit (loop max ${max}): approve or reject checkpoint ${checkpointId}`;
}

/** What one vote does: refused, recorded, or recorded and deciding the checkpoint. */
export type VoteOutcome =
  | { ok: false; rejection: Rejection }
  | { ok: true; resolves: false }
  | { ok: true; resolves: true; answer: CheckpointAnswer; by: Actor[] };

/** Evaluates `actor` answering the open checkpoint `cp` of a run started by `startedBy`. */
export function evaluateVote(
  cp: CheckpointState,
  startedBy: Actor,
  actor: Actor,
  answer: CheckpointAnswer,
): VoteOutcome {
  const name = personName(actor);
  if (!cp.answers.includes(answer)) {
    return illegal(
      `"${answer}" is not an answer to checkpoint ${cp.id} (allowed: ${cp.answers.join(', ')})`,
    );
  }
  // One person, one vote, on whichever platform they pressed (their linked identities).
  if (cp.votes.some((v) => samePerson(actor, v.actor))) {
    return illegal(`${name} already voted on checkpoint ${cp.id}`);
  }
  if (answer === 'approve' && cp.policy.fourEyes && samePerson(actor, startedBy)) {
    return {
      ok: false,
      rejection: {
        code: 'UNAUTHORIZED',
        message: `four-eyes rule: ${name} started this run and cannot approve checkpoint ${cp.id}; another approver must`,
      },
    };
  }
  if (answer !== 'approve') return { ok: true, resolves: true, answer, by: [actor] };
  const approvers = [...cp.votes.filter((v) => v.answer === 'approve').map((v) => v.actor), actor];
  if (approvers.length < cp.policy.approvals) return { ok: true, resolves: false };
  return { ok: true, resolves: true, answer: 'approve', by: approvers };
}

const PAST: Record<string, string> = {
  approve: 'approved',
  reject: 'rejected',
  loop: 'sent back with changes requested',
  'expired-keep': 'expired',
};

/** Why a closed checkpoint cannot be answered: "checkpoint X already approved by A, B". */
export function closedMessage(cp: CheckpointState): string {
  if (cp.decision) {
    const by = cp.decision.by.map(personName).join(', ');
    return `checkpoint ${cp.id} already ${PAST[cp.decision.answer]}${by ? ` by ${by}` : ''}`;
  }
  return `checkpoint ${cp.id} was withdrawn: ${cp.withdrawn?.reason ?? 'closed'}`;
}

function illegal(message: string): VoteOutcome {
  return { ok: false, rejection: { code: 'ILLEGAL_TRANSITION', message } };
}
