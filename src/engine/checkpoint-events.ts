/** Events of a run's checkpoints: opened, voted on, resolved, expired, withdrawn, digested. */
import type { EventBase } from './event-base.ts';
import type { CheckpointState, CheckpointVote } from './model.ts';

/** A checkpoint opened; the run awaits an answer. */
export interface CheckpointOpenedEvent extends EventBase {
  type: 'checkpointOpened';
  checkpoint: CheckpointState;
}

/** Someone voted on the open checkpoint. */
export interface CheckpointVotedEvent extends EventBase {
  type: 'checkpointVoted';
  checkpointId: string;
  vote: CheckpointVote;
}

/** The open checkpoint was decided; it moves to the history. */
export interface CheckpointResolvedEvent extends EventBase {
  type: 'checkpointResolved';
  checkpointId: string;
  decision: NonNullable<CheckpointState['decision']>;
}

/**
 * The content digest of the open checkpoint was recorded. With `previous` it replaced an earlier
 * one (the content changed after the message was posted): the votes given so far, for the old
 * content, no longer count.
 */
export interface CheckpointDigestRecordedEvent extends EventBase {
  type: 'checkpointDigestRecorded';
  checkpointId: string;
  digest: string;
  label: string;
  previous?: string;
  /** What changed, in words ("plan.md changed"), with `previous`. */
  change?: string;
}

/** The open checkpoint expired and stays open (onExpiry 'keep'). */
export interface CheckpointExpiredEvent extends EventBase {
  type: 'checkpointExpired';
  checkpointId: string;
}

/** The open checkpoint was closed without a decision (run cancelled, reverted, …). */
export interface CheckpointWithdrawnEvent extends EventBase {
  type: 'checkpointWithdrawn';
  checkpointId: string;
  reason: string;
}
