/**
 * Decide rules for checkpoints: answers (votes) and expiry. A checkpoint resolves exactly once;
 * what follows depends on its kind: an approved `before` gate queues the step, any other approval
 * moves past the step, a reject fails the run, a loop answer goes back.
 */
import { changesRefusal, closedMessage, evaluateVote } from './checkpoint-policy.ts';
import type {
  AnswerCheckpointCommand,
  ExpireCheckpointCommand,
  RecordCheckpointDigestCommand,
  ReopenCheckpointCommand,
  RequestChangesCommand,
} from './commands.ts';
import { type DecideContext, refuse, who } from './decide-context.ts';
import { recordApprovalReasons, recordChanges } from './decide-feedback.ts';
import {
  changesTarget,
  defOf,
  enterStep,
  loopBack,
  openCheckpoint,
  queueStep,
} from './decide-flow.ts';
import { type Actor, type CheckpointAnswer, type CheckpointState, findStep } from './model.ts';

/** The checkpoint a command names (the open one when it names none), refused when closed. */
function openTarget(ctx: DecideContext, checkpointId: string | undefined): CheckpointState {
  const { state } = ctx;
  const open = state.checkpoint;
  if (checkpointId === undefined || open?.id === checkpointId) {
    if (!open) refuse(`run ${state.id} has no open checkpoint (it is ${state.status})`);
    return open;
  }
  const closed = state.checkpoints.find((c) => c.id === checkpointId);
  if (!closed) refuse(`run ${state.id} has no checkpoint ${checkpointId}`, 'NOT_FOUND');
  refuse(closedMessage(closed));
}

/** A human answers; the vote is recorded and, when it decides, the checkpoint resolves. */
export function decideAnswerCheckpoint(ctx: DecideContext, c: AnswerCheckpointCommand): void {
  const cp = openTarget(ctx, c.checkpointId);
  // Approve exactly what was shown: a press computed against other content is refused.
  if (c.digest !== undefined && cp.digest !== undefined && c.digest !== cp.digest) {
    refuse(
      `checkpoint ${cp.id} changed after it was shown (now ${cp.digestLabel ?? cp.digest.slice(0, 6)}): look at it again`,
      'ILLEGAL_TRANSITION',
    );
  }
  const outcome = evaluateVote(cp, ctx.state.startedBy, c.actor, c.answer);
  if (!outcome.ok) refuse(outcome.rejection.message, outcome.rejection.code);
  if (c.answer === 'loop') checkChanges(ctx, cp, c.reason);
  // Approving a closed PABCD gate is an override: its reason is the evidence codexclaw records.
  if (cp.gate && c.answer === 'approve' && !c.reason?.trim()) {
    refuse(`approving checkpoint ${cp.id} overrides a closed gate: give a reason`, 'INVALID_INPUT');
  }
  const vote = {
    actor: c.actor,
    answer: c.answer,
    at: c.at,
    ...(c.reason !== undefined ? { reason: c.reason } : {}),
    ...(c.digest !== undefined ? { digest: c.digest } : {}),
  };
  ctx.emit({ type: 'checkpointVoted', checkpointId: cp.id, vote });
  if (outcome.resolves) resolve(ctx, cp, outcome.answer, outcome.by, c.reason, c.digest);
}

/** The edge's content digest of the open checkpoint: first recorded, or replaced (see event). */
export function decideRecordDigest(ctx: DecideContext, c: RecordCheckpointDigestCommand): void {
  const cp = openTarget(ctx, c.checkpointId);
  if (!/^[0-9a-f]{64}$/.test(c.digest))
    refuse('a checkpoint digest is 64 hex digits', 'INVALID_INPUT');
  if (cp.digest === c.digest) refuse(`checkpoint ${cp.id} already has digest ${c.label}`);
  ctx.emit({
    type: 'checkpointDigestRecorded',
    checkpointId: cp.id,
    digest: c.digest,
    label: c.label.slice(0, 200),
    ...(cp.digest !== undefined ? { previous: cp.digest } : {}),
    ...(cp.digest !== undefined && c.change !== undefined
      ? { change: c.change.slice(0, 300) }
      : {}),
  });
}

/** Request changes: the answer `loop` with its reason required (see RequestChangesCommand). */
export function decideRequestChanges(ctx: DecideContext, c: RequestChangesCommand): void {
  decideAnswerCheckpoint(ctx, {
    type: 'answerCheckpoint',
    at: c.at,
    actor: c.actor,
    answer: 'loop',
    reason: c.reason,
    ...(c.checkpointId !== undefined ? { checkpointId: c.checkpointId } : {}),
    ...(c.digest !== undefined ? { digest: c.digest } : {}),
  });
}

/** A change request needs its reason (the agent acts on it) and room under the step's max. */
function checkChanges(ctx: DecideContext, cp: CheckpointState, reason: string | undefined): void {
  if (!reason?.trim()) {
    refuse(`a change request needs a reason: say what to change at ${cp.id}`, 'INVALID_INPUT');
  }
  const step = findStep(ctx.state, cp.stepId)!;
  const why = changesRefusal(defOf(ctx, step.index), ctx.state.loopCounters[step.id] ?? 0, cp.id);
  if (why !== null) refuse(why);
}

/**
 * The expiry timer fired: onExpiry 'reject' or 'approve' decides in the system's name; 'keep'
 * marks it expired and leaves it open for a human.
 */
export function decideExpireCheckpoint(ctx: DecideContext, c: ExpireCheckpointCommand): void {
  const cp = openTarget(ctx, c.checkpointId);
  if (cp.expiresAt === undefined) refuse(`checkpoint ${cp.id} has no expiry`);
  if (Date.parse(c.at) < Date.parse(cp.expiresAt)) {
    refuse(`checkpoint ${cp.id} does not expire before ${cp.expiresAt}`);
  }
  if (cp.expiredAt !== undefined) refuse(`checkpoint ${cp.id} already expired and is kept open`);
  const onExpiry = cp.policy.onExpiry;
  if (onExpiry === 'keep') {
    ctx.emit({ type: 'checkpointExpired', checkpointId: cp.id });
    return;
  }
  resolve(ctx, cp, onExpiry, [c.actor], `expired after ${cp.policy.expiresInMs} ms`);
}

/**
 * A person re-opens the open checkpoint that expired and was kept open (onExpiry 'keep'): it is
 * withdrawn, naming them, and the same question opens again with its votes reset and a fresh
 * expiry (a new checkpoint id, so every chat gets a new message with live buttons). A checkpoint
 * that has not expired, or one decided by its expiry (the run moved on or failed), is refused.
 */
export function decideReopenCheckpoint(ctx: DecideContext, c: ReopenCheckpointCommand): void {
  const cp = openTarget(ctx, c.checkpointId);
  if (cp.expiredAt === undefined) {
    refuse(`checkpoint ${cp.id} has not expired: answer it instead`);
  }
  const step = findStep(ctx.state, cp.stepId)!;
  ctx.emit({
    type: 'checkpointWithdrawn',
    checkpointId: cp.id,
    reason: `expired; re-opened by ${who(c.actor)}`,
  });
  openCheckpoint(ctx, step, cp.when, cp.reason, cp.gate);
}

function resolve(
  ctx: DecideContext,
  cp: CheckpointState,
  answer: CheckpointAnswer,
  by: Actor[],
  reason: string | undefined,
  digest?: string,
): void {
  // The decision carries the digest it was given for: the one pressed, else the one recorded.
  const bound = digest ?? cp.digest;
  ctx.emit({
    type: 'checkpointResolved',
    checkpointId: cp.id,
    decision: {
      answer,
      by,
      at: ctx.at,
      ...(reason !== undefined ? { reason } : {}),
      ...(bound !== undefined ? { digest: bound } : {}),
    },
  });
  const step = findStep(ctx.state, cp.stepId)!;
  // The closed checkpoint holds every vote, the deciding one included.
  const closed = ctx.state.checkpoints.at(-1) ?? cp;
  if (answer === 'approve') recordApprovalReasons(ctx, closed);
  if (answer === 'reject') {
    const names = by.map(who).join(', ');
    ctx.emit({
      type: 'runFailed',
      reason: reason ? `rejected by ${names}: ${reason}` : `rejected by ${names} at ${cp.id}`,
      by: by[0]!,
    });
    return;
  }
  if (answer === 'loop') {
    const target = changesTarget(ctx, step, cp.when)!;
    recordChanges(ctx, cp, target, by[0]!, reason!);
    loopBack(ctx, step, reason, target.id);
    return;
  }
  if (cp.when === 'before') {
    queueStep(ctx, step, 'visit', 0);
    return;
  }
  enterStep(ctx, step.index + 1);
}
