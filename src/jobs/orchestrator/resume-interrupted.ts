/**
 * `resume` of a run that is still `active` because the process driving it died mid-step (a
 * SIGKILLed `phasebridge run`): the engine's resume is for paused runs, so this continues the
 * interrupted step at once, or says precisely why it cannot.
 *   job unknown to the queue (or cancelled) → recoverInterrupted: the step runs again;
 *   job held by a dead worker of this host → handed back to the queue now (not after the lease);
 *   job held by this process's own worker → nothing to do (it runs again already);
 *   job held by another live process → ConflictError naming it;
 *   job waiting → nothing to do: a worker takes it (the caller drives the run on).
 */
import type { RunState } from '../../engine/model.ts';
import type { CommitResult } from '../../engine/store/types.ts';
import { ConflictError } from '../../errors.ts';
import type { JobQueue } from '../queue/port.ts';
import type { CommandInput } from './job-results.ts';
import { inFlightJob, interruptedCommands } from './reconcile.ts';
import type { RunDriver } from './run-driver.ts';

/** Handles `resume` of an interrupted active run; null when the engine should decide it. */
export async function resumeInterrupted(
  driver: RunDriver,
  queue: JobQueue,
  runId: string,
  key: string,
  command: CommandInput,
): Promise<CommitResult | null> {
  const state = await driver.peek(runId);
  const job = inFlightJob(state);
  if (job === null) return null;
  const status = await queue.get(job.id);
  if (status === null || status.state === 'cancelled') {
    const [recover] = interruptedCommands(state, job);
    if (recover === undefined) return null;
    // The human's key, so repeating the same resume is a no-op.
    return driver.commit(runId, key, { ...recover.command, actor: command.actor });
  }
  if (status.state === 'waiting') return unchanged(state);
  if (status.state !== 'active') return null;
  const taken = queue.reclaim ? await queue.reclaim(job.id) : null;
  if (taken === null) {
    throw new ConflictError(
      `run ${runId}: step ${job.stepId} is held by a queue worker; if that worker died, the queue hands the job back when its lock expires (30 s)`,
    );
  }
  if (taken.kind === 'held') {
    const pid = taken.by.split(':')[1] ?? '?';
    // Held by this very process: its worker took the job back already (it is running again).
    if (pid === String(process.pid)) return unchanged(state);
    throw new ConflictError(
      `run ${runId}: step ${job.stepId} is still running in pid ${pid}; stop that process or wait for it`,
    );
  }
  return unchanged(state);
}

/** A resume that changed nothing in the ledger: the caller follows the run as it is. */
function unchanged(state: RunState): CommitResult {
  return { ok: true, state, events: [], effects: [], duplicate: true };
}
