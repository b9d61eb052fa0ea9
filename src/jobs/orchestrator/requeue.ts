/**
 * A job the ledger queued but that never reached the queue: the process that committed it
 * died, or lost its Redis (a network cut, a leader that lost its lease), between the commit and
 * the enqueue. The job is enqueued again as the ledger's own effect asked for it, same attempt
 * and same job id, so it runs once: an enqueue of an id the queue holds is a no-op, whichever
 * process's copy lands first. A step's or a task's job qualifies only while it is still `queued`
 * (it never started anywhere: a `running` one whose job vanished is recovered as interrupted).
 * A trigger has no start event: it counts as unstarted while queued and missing from the queue,
 * since a job that ran stays in the queue (finished jobs are pruned only after days, or beyond
 * the newest thousand, long after their outcome was applied).
 * Reads the ledger without the run's lock: the old leader may still hold it while it stops.
 */
import path from 'node:path';
import type { Effect } from '../../engine/events.ts';
import { NATIVE_FILES } from '../../engine/layouts/native.ts';
import { currentStep, findStep, type RunState, stepJobId, taskJobId } from '../../engine/model.ts';
import { analyzeRun } from '../../engine/store/run-analysis.ts';
import type { RunStore } from '../../engine/store/run-store.ts';
import type { Log } from '../../log.ts';
import { type JobQueue, jobIdOf } from '../queue/port.ts';
import type { EnqueueEffect } from './effects.ts';
import { triggerQueueStepId } from './job-payload.ts';
import type { JobRef } from './job-results.ts';
import type { RunDriver } from './run-driver.ts';

/** True when `job` (a step's, a trigger's or a task's) is in flight and never started. */
export function isUnstartedJob(state: RunState, job: JobRef): boolean {
  if (state.status !== 'active') return false;
  if (job.kind === 'trigger') {
    const t = state.trigger;
    return t?.status === 'queued' && t.stepId === job.stepId && t.attempt === job.attempt;
  }
  if (job.kind === 'task') {
    const task = findStep(state, job.stepId)?.tasks?.find((t) => t.id === job.taskId);
    return task?.status === 'queued' && task.attempt === job.attempt;
  }
  const step = currentStep(state);
  return step?.id === job.stepId && step.attempt === job.attempt && step.status === 'queued';
}

/** The job id an enqueue effect asks for (the ids effects.ts gives the queue). */
export function jobIdOfEnqueue(effect: EnqueueEffect): string {
  if (effect.type === 'enqueueTask') {
    return taskJobId(effect.runId, effect.stepId, effect.taskId, effect.attempt);
  }
  if (effect.type === 'enqueueTrigger') {
    const stepId = triggerQueueStepId(effect.stepId);
    return jobIdOf({ runId: effect.runId, stepId, attempt: effect.attempt });
  }
  return stepJobId(effect.runId, effect.stepId, effect.attempt);
}

/** The enqueue effect of the ledger that asked for `jobId` (the latest such), or null. */
export function ledgerEnqueueOf(
  store: RunStore,
  runId: string,
  jobId: string,
): EnqueueEffect | null {
  const runDir = store.runDir(runId);
  const { entries } = analyzeRun(runId, runDir, path.join(runDir, NATIVE_FILES.ledger));
  for (let i = entries.length - 1; i >= 0; i--) {
    for (const effect of entries[i]!.effects) {
      if (isEnqueue(effect) && jobIdOfEnqueue(effect) === jobId) return effect;
    }
  }
  return null;
}

function isEnqueue(e: Effect): e is EnqueueEffect {
  return e.type === 'enqueueStep' || e.type === 'enqueueTrigger' || e.type === 'enqueueTask';
}

/** What requeueing needs. */
export interface RequeueDeps {
  queue: JobQueue;
  log: Log;
  driver: RunDriver;
}

/**
 * Enqueues an unstarted job (step, trigger or task) when the queue does not hold it, as its
 * ledger effect says. 'requeued': enqueued now; 'held': the queue has it (in any state);
 * 'not-mine': nothing to do here (not unstarted, or no ledger effect for it).
 */
export async function requeueUnstarted(
  deps: RequeueDeps,
  state: RunState,
  job: JobRef,
): Promise<'requeued' | 'held' | 'not-mine'> {
  if (!isUnstartedJob(state, job)) return 'not-mine';
  if ((await deps.queue.get(job.id)) !== null) return 'held';
  const effect = ledgerEnqueueOf(await deps.driver.storeOf(state.id), state.id, job.id);
  if (effect === null) return 'not-mine';
  // Checked again under the run's mutex: a commit of this process in flight (its own enqueue, a
  // cancel) goes first.
  let held = false;
  const still = async (now: RunState) => {
    if (!isUnstartedJob(now, job)) return false;
    held = (await deps.queue.get(job.id)) !== null;
    return !held;
  };
  if (!(await deps.driver.redo(state.id, effect, still))) return held ? 'held' : 'not-mine';
  deps.log.warn(
    { runId: state.id, jobId: job.id },
    `a queued ${job.kind} had no job in the queue (its enqueue never landed): enqueueing it again`,
  );
  return 'requeued';
}
