/**
 * Start-up reconciliation. Every unfinished run of the runs index (and any run folder the index
 * misses) is loaded (re-projecting a projection behind its ledger); then each one whose
 * current step (or trigger) is in flight is checked against the queue:
 *   job waiting, or active in a live worker → left alone (a worker has it or will take it);
 *   job active in a worker process of this host that is gone → handed back to the queue now
 *   (not after its lease), as a task's job is;
 *   job finished while we were down → its stored outcome is applied;
 *   job unknown and the step never started (its enqueue never landed: the process that committed
 *   it died or lost Redis first) → the ledger's enqueue done again, same attempt and job id
 *   (requeue.ts), also for a run another live process still holds (an old leader stopping);
 *   job unknown (or cancelled) otherwise → recoverInterrupted (the engine re-queues the step
 *   when the run has resumeFromLastStep, else blocks it "interrupted during step X: resume or
 *   retry").
 * Only the in-flight attempt is touched: no completed step runs again. Open checkpoints with an
 * expiry get their timers back; idle runs' locks are released.
 */
import fs from 'node:fs';
import type { RunsRepo } from '../../db/repositories/runs.ts';
import type { RunIndexRecord } from '../../db/repositories/runs-record.ts';
import type { RunIndexStatus } from '../../db/schema.ts';
import { currentStep, type RunState, SYSTEM_ACTOR, stepJobId } from '../../engine/model.ts';
import type { LoadedRun } from '../../engine/store/types.ts';
import { NotFoundError } from '../../errors.ts';
import type { Log } from '../../log.ts';
import { errorMessage } from '../queue/outcome.ts';
import { type JobQueue, jobIdOf } from '../queue/port.ts';
import { triggerQueueStepId } from './job-payload.ts';
import { type JobRef, type KeyedCommand, outcomeCommands } from './job-results.ts';
import { requeueUnstarted } from './requeue.ts';
import { indexRow, type RunDriver } from './run-driver.ts';
import { ensureSpecFile } from './run-files.ts';
import { isRunLockConflict, type RunStores } from './run-stores.ts';
import { inFlightTaskJobs, taskInterruptedCommands } from './task-jobs.ts';

/** The job the run waits for: its current step's attempt or its trigger; null when none. */
export function inFlightJob(state: RunState): JobRef | null {
  if (state.status !== 'active') return null;
  const t = state.trigger;
  if (t?.status === 'queued') {
    const id = jobIdOf({
      runId: state.id,
      stepId: triggerQueueStepId(t.stepId),
      attempt: t.attempt,
    });
    return { id, stepId: t.stepId, attempt: t.attempt, kind: 'trigger' };
  }
  const step = currentStep(state);
  if (!step || (step.status !== 'queued' && step.status !== 'running')) return null;
  // A tasks step has no job of its own: its tasks' jobs are checked one by one (task-jobs.ts).
  if (state.workflow.steps[step.index]?.tasks !== undefined) return null;
  const id = stepJobId(state.id, step.id, step.attempt);
  return { id, stepId: step.id, attempt: step.attempt, kind: 'step' };
}

/** What to commit for an in-flight job that vanished (empty when it is no longer in flight). */
export function interruptedCommands(state: RunState, job: JobRef): KeyedCommand[] {
  const now = inFlightJob(state);
  if (now === null || now.id !== job.id) return [];
  const key = `recover:${state.id}:${job.kind === 'trigger' ? triggerQueueStepId(job.stepId) : job.stepId}:${job.attempt}`;
  if (job.kind === 'step') {
    return [{ key, command: { type: 'recoverInterrupted', actor: SYSTEM_ACTOR } }];
  }
  // The engine has no recovery for a trigger: report it failed so a human can retry the run.
  const command = {
    type: 'triggerFinished' as const,
    stepId: job.stepId,
    attempt: job.attempt,
    exitCode: -1,
    error: 'interrupted: its job was lost while phasebridge was down',
    actor: SYSTEM_ACTOR,
  };
  return [{ key, command }];
}

/** What reconciliation needs. */
export interface ReconcileDeps {
  driver: RunDriver;
  stores: RunStores;
  runs: RunsRepo;
  queue: JobQueue;
  log: Log;
  /** Re-arms the expiry timer of the run's open checkpoint, if it has one. */
  armExpiry(state: RunState): void;
  /**
   * Workspaces that may hold runs the index has never seen (bound chats', followed ones): a
   * workspace whose first run was killed before its index row is in no row of the index.
   */
  knownWorkspaces?: () => Promise<readonly string[]>;
}

/** Statuses a run can still leave: the only runs start-up loads. */
export const UNFINISHED: readonly RunIndexStatus[] = ['active', 'awaiting', 'blocked'];

/**
 * Reconciles the unfinished runs of the index, plus run folders the index does not know (a
 * crash between a run's first commit and its index row); finished runs are not read at all, so
 * start-up costs grow with active work, not history. Returns the ids of the runs looked at.
 */
export async function reconcile(deps: ReconcileDeps): Promise<string[]> {
  const rows = await deps.runs.list({ status: UNFINISHED });
  const targets: { runId: string; workspace: string; row?: RunIndexRecord }[] = rows.map((row) => ({
    runId: row.id,
    workspace: row.workspace,
    row,
  }));
  for (const workspace of await workspacesToScan(deps)) {
    const known = await deps.runs.idsIn(workspace);
    try {
      const store = deps.stores.for(workspace);
      // Folders a start killed before its first ledger line left: not runs, removed.
      const never = store.sweepNeverStarted();
      if (never.length > 0) deps.log.info({ workspace, runs: never }, 'empty run folders removed');
      const stray = await store.list((id) => !known.has(id));
      for (const runId of stray) targets.push({ runId, workspace });
    } catch (err) {
      deps.log.warn({ workspace, err: errorMessage(err) }, 'workspace not readable');
    }
  }
  const seen: string[] = [];
  for (const t of targets) {
    let run: LoadedRun;
    try {
      run = await deps.stores.for(t.workspace).load(t.runId);
    } catch (err) {
      if (isRunLockConflict(err)) {
        // Another live process holds the run and drives it, except a step whose enqueue it never
        // got through (an old leader cut from Redis): that job is queued here, once.
        deps.log.debug({ runId: t.runId }, 'run held by a live process; left to it');
        seen.push(t.runId);
        await requeueHeld(deps, t.runId, t.workspace);
      } else if (err instanceof NotFoundError) {
        deps.log.warn({ runId: t.runId, workspace: t.workspace }, 'indexed run not found on disk');
      } else {
        deps.log.warn({ runId: t.runId, err: errorMessage(err) }, 'run not recovered');
      }
      continue;
    }
    seen.push(t.runId);
    try {
      await reconcileRun(deps, run, t.row);
    } catch (err) {
      deps.log.warn({ runId: t.runId, err: errorMessage(err) }, 'reconciling run failed');
    }
  }
  return seen;
}

/** The index's workspaces, then the other known ones that exist (a gone one is no warning). */
async function workspacesToScan(deps: ReconcileDeps): Promise<string[]> {
  const indexed = await deps.runs.workspaces();
  const seen = new Set(indexed);
  const extra: string[] = [];
  for (const ws of (await deps.knownWorkspaces?.()) ?? []) {
    if (seen.has(ws)) continue;
    seen.add(ws);
    if (fs.statSync(ws, { throwIfNoEntry: false })?.isDirectory() === true) extra.push(ws);
  }
  return [...indexed, ...extra];
}

async function reconcileRun(
  deps: ReconcileDeps,
  run: LoadedRun,
  row: RunIndexRecord | undefined,
): Promise<void> {
  const { state } = run;
  const { driver, log } = deps;
  driver.remember(state.id, { workspace: state.workspace, layout: state.layout });
  for (const warning of run.warnings)
    log.warn({ runId: state.id, warning }, 'run loaded with warnings');
  if (row === undefined) await deps.runs.upsert(indexRow(state));
  else if (row.status !== state.status) {
    await deps.runs.updateStatus(state.id, state.status, Date.parse(state.updatedAt));
  }
  if (state.status !== 'active') {
    if (state.status === 'awaiting') deps.armExpiry(state);
    await driver.settle(state.id);
    return;
  }
  await ensureSpecFile(state.workspace, state.layout, state.id, state.spec);
  await reconcileTasks(deps, state);
  const job = inFlightJob(state);
  if (job !== null) {
    const status = await deps.queue.get(job.id);
    if (status?.state === 'active' && deps.queue.reclaim) {
      // Held by a worker process that is gone (this host, pid dead: a SIGKILLed serve): back to
      // the queue now, not when its lease runs out (30 s); a live holder keeps it.
      const taken = await deps.queue.reclaim(job.id);
      log.info({ runId: state.id, jobId: job.id, taken: taken.kind }, 'run resumes with its job');
    } else if (status?.state === 'waiting' || status?.state === 'active') {
      log.info({ runId: state.id, jobId: job.id, state: status.state }, 'run resumes with its job');
    } else if (status?.outcome && status.state !== 'cancelled') {
      const outcome = status.outcome;
      log.info(
        { runId: state.id, jobId: job.id },
        'applying a job outcome from while we were down',
      );
      await driver.commitPlanned(state.id, (s) => outcomeCommands(s, job, outcome));
    } else if (status === null && (await requeueUnstarted(deps, state, job)) !== 'not-mine') {
      // The step never started: its own job is in the queue now, nothing was interrupted.
    } else {
      log.warn(
        { runId: state.id, jobId: job.id },
        'the job of a running step vanished; recovering',
      );
      await driver.commitPlanned(state.id, (s) => interruptedCommands(s, job));
    }
  }
  await driver.settle(state.id);
}

/** A run another live process holds: its unstarted jobs missing from the queue are queued (requeue.ts). */
async function requeueHeld(deps: ReconcileDeps, runId: string, workspace: string): Promise<void> {
  try {
    const { state } = await deps.stores.for(workspace).peek(runId);
    deps.driver.remember(runId, { workspace: state.workspace, layout: state.layout });
    for (const job of [inFlightJob(state), ...inFlightTaskJobs(state)]) {
      if (job !== null) await requeueUnstarted(deps, state, job);
    }
  } catch (err) {
    deps.log.warn({ runId, err: errorMessage(err) }, 'the job of a held run was not checked');
  }
}

/**
 * A tasks step at start-up: a task list never read (the process died first) is read again; each
 * in-flight task's job is left alone while the queue has it, its stored outcome applied when it
 * finished meanwhile, enqueued again when it never reached the queue (requeue.ts), and a vanished
 * started one is re-run as a new attempt (completed tasks never are).
 */
async function reconcileTasks(deps: ReconcileDeps, state: RunState): Promise<void> {
  const step = currentStep(state);
  if (!step || state.workflow.steps[step.index]?.tasks === undefined) return;
  if (step.status === 'queued' && step.tasks === undefined) {
    const key = `recover:${state.id}:${step.id}:${step.attempt}`;
    const command = { type: 'recoverInterrupted' as const, actor: SYSTEM_ACTOR };
    await deps.driver.commitPlanned(state.id, () => [{ key, command }]);
    return;
  }
  for (const job of inFlightTaskJobs(state)) {
    const status = await deps.queue.get(job.id);
    if (status?.state === 'active' && deps.queue.reclaim) {
      // A task job whose worker process is gone goes back to the queue now, not after its lease.
      await deps.queue.reclaim(job.id);
      continue;
    }
    if (status?.state === 'waiting' || status?.state === 'active') continue;
    if (status?.outcome && status.state !== 'cancelled') {
      const outcome = status.outcome;
      await deps.driver.commitPlanned(state.id, (s) => outcomeCommands(s, job, outcome));
    } else if (status === null && (await requeueUnstarted(deps, state, job)) !== 'not-mine') {
      // The task never started: its own job is in the queue now, same attempt.
    } else {
      deps.log.warn({ runId: state.id, jobId: job.id }, 'the job of a running task vanished');
      await deps.driver.commitPlanned(state.id, (s) => taskInterruptedCommands(s, job));
    }
  }
}
