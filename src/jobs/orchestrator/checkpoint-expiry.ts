/**
 * Checkpoint expiry as the orchestrator drives it: a timer for each open checkpoint with an
 * `expiresAt` (armed at start-up and whenever a commit of any process opens one, disarmed when
 * one resolves or withdraws it); a timer firing commits `expireCheckpoint` under the key
 * `expire:<checkpointId>`, so timers firing in two processes count once.
 */
import { type RunState, SYSTEM_ACTOR } from '../../engine/model.ts';
import type { ExpiryTimers } from './expiry-timers.ts';
import type { JobSignals } from './job-signals.ts';
import type { RunUpdate } from './types.ts';

/** Arms, follows and fires the expiry timers of open checkpoints. */
export class CheckpointExpiry {
  readonly #timers: ExpiryTimers;
  readonly #signals: JobSignals;

  constructor(timers: ExpiryTimers, signals: JobSignals) {
    this.#timers = timers;
    this.#signals = signals;
  }

  /** Commits the expiry of a run's checkpoint. */
  expire(runId: string, checkpointId: string): void {
    void this.#signals.apply(runId, `expiry of ${checkpointId}`, () => [
      {
        key: `expire:${checkpointId}`,
        command: { type: 'expireCheckpoint', checkpointId, actor: SYSTEM_ACTOR },
      },
    ]);
  }

  /** Arms the timer of the run's open checkpoint, if it has an expiry not reached yet. */
  arm(state: RunState): void {
    const cp = state.checkpoint;
    if (!cp?.expiresAt || cp.expiredAt !== undefined) return;
    this.#timers.arm(state.id, cp.id, cp.expiresAt, () => this.expire(state.id, cp.id));
  }

  /** Another process's commit may open or close a checkpoint with an expiry: timers follow. */
  follow(u: RunUpdate): void {
    for (const e of u.events) {
      if (e.type === 'checkpointResolved' || e.type === 'checkpointWithdrawn') {
        this.#timers.disarm(u.runId, e.checkpointId);
      }
    }
    if (u.state.status === 'awaiting') this.arm(u.state);
  }
}
