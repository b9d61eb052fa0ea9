/**
 * A step the ledger queued but whose job never reached the queue: the process that committed it
 * died, or lost its Redis (a network cut, a leader that lost its lease), between the commit and
 * the enqueue. The job is enqueued again as the ledger's own effect asked for it, same attempt
 * and same job id, so it runs once: an enqueue of an id the queue holds is a no-op, whichever
 * process's copy lands first. Only a step still `queued` qualifies: it never started anywhere,
 * so nothing of it ran (a `running` step whose job vanished is recovered as interrupted instead).
 * Reads the ledger without the run's lock: the old leader may still hold it while it stops.
 */
import path from 'node:path';
import type { Effect } from '../../engine/events.ts';
import { NATIVE_FILES } from '../../engine/layouts/native.ts';
import { currentStep, type RunState, stepJobId } from '../../engine/model.ts';
import { analyzeRun } from '../../engine/store/run-analysis.ts';
import type { RunStore } from '../../engine/store/run-store.ts';
import type { Log } from '../../log.ts';
import type { JobQueue } from '../queue/port.ts';
import type { EnqueueEffect } from './effects.ts';
import type { JobRef } from './job-results.ts';
import type { RunDriver } from './run-driver.ts';

/** True when `job` is the job of the run's current step and that step never started. */
export function isUnstartedStep(state: RunState, job: JobRef): boolean {
  if (job.kind !== 'step') return false;
  const step = currentStep(state);
  return step?.id === job.stepId && step.attempt === job.attempt && step.status === 'queued';
}

/** The enqueueStep effect of the ledger that asked for `jobId` (the latest such), or null. */
export function ledgerEnqueueOf(
  store: RunStore,
  runId: string,
  jobId: string,
): EnqueueEffect | null {
  const runDir = store.runDir(runId);
  const { entries } = analyzeRun(runId, runDir, path.join(runDir, NATIVE_FILES.ledger));
  for (let i = entries.length - 1; i >= 0; i--) {
    for (const effect of entries[i]!.effects) {
      if (isStepEnqueue(effect) && stepJobId(runId, effect.stepId, effect.attempt) === jobId) {
        return effect;
      }
    }
  }
  return null;
}

function isStepEnqueue(e: Effect): e is Extract<Effect, { type: 'enqueueStep' }> {
  return e.type === 'enqueueStep';
}

/** What requeueing needs. */
export interface RequeueDeps {
  queue: JobQueue;
  log: Log;
  driver: RunDriver;
}

/**
 * Enqueues the job of the run's unstarted current step when the queue does not hold it, as its
 * ledger effect says. 'requeued': enqueued now; 'held': the queue has it (in any state);
 * 'not-mine': nothing to do here (no unstarted step, or no ledger effect for it).
 */
export async function requeueUnstarted(
  deps: RequeueDeps,
  state: RunState,
  job: JobRef,
): Promise<'requeued' | 'held' | 'not-mine'> {
  if (!isUnstartedStep(state, job)) return 'not-mine';
  if ((await deps.queue.get(job.id)) !== null) return 'held';
  const effect = ledgerEnqueueOf(await deps.driver.storeOf(state.id), state.id, job.id);
  if (effect === null) return 'not-mine';
  // Checked again under the run's mutex: a commit of this process in flight (its own enqueue, a
  // cancel) goes first.
  let held = false;
  const still = async (now: RunState) => {
    if (!isUnstartedStep(now, job)) return false;
    held = (await deps.queue.get(job.id)) !== null;
    return !held;
  };
  if (!(await deps.driver.redo(state.id, effect, still))) return held ? 'held' : 'not-mine';
  deps.log.warn(
    { runId: state.id, jobId: job.id },
    'a queued step had no job in the queue (its enqueue never landed): enqueueing it again',
  );
  return 'requeued';
}
