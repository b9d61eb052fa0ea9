/**
 * What the bridge does with a git-mode job's result before the engine sees it: fetch the commit
 * the worker pushed and move the bridge's run branch to it (the next step's base). A commit that cannot be fetched turns
 * the outcome into a failure: the step's work must never be dropped silently. The files the
 * worker reports as changed are written beside the step's log, as a shared-mode worker does, for
 * the checkpoint message.
 */

import type { Log } from '../../log.ts';
import { landCommit, originOf } from '../git/bridge-git.ts';
import { runBranch, taskBranch } from '../git/run-git.ts';
import { errorMessage } from '../queue/outcome.ts';
import type { JobOutcome, JobSpec } from '../queue/port.ts';
import { changesFilePath, writeChangesFile } from '../runner/git-changes.ts';
import { parseQueueStepId, parseStepJobResult, type StepJobResult } from './job-payload.ts';
import { stepLogPath } from './run-files.ts';

/** Writes a step's reported changes beside its log on the bridge (best effort: a listing only). */
function recordReportedChanges(
  workspace: string,
  job: Pick<JobSpec, 'runId' | 'stepId' | 'attempt'>,
  result: StepJobResult,
  log?: Log,
): void {
  const { stepId, kind } = parseQueueStepId(job.stepId);
  if (result.changes === undefined || kind !== 'step') return;
  const logFile = stepLogPath(workspace, job.runId, stepId, job.attempt, kind);
  try {
    writeChangesFile(workspace, changesFilePath(logFile, stepId, job.attempt), result.changes);
  } catch (err) {
    log?.warn({ runId: job.runId, err: errorMessage(err) }, 'writing the changed files failed');
  }
}

/** The outcome to apply: unchanged, or a failure when the pushed commit could not be landed. */
export async function landOutcome(
  workspace: string,
  job: Pick<JobSpec, 'runId' | 'stepId' | 'attempt'>,
  outcome: JobOutcome,
  log?: Log,
): Promise<JobOutcome> {
  const runId = job.runId;
  if (!outcome.ok) return outcome;
  const result = parseStepJobResult(outcome.result);
  if (result?.commit === undefined) return outcome;
  try {
    const repo = await originOf(workspace);
    if (repo === null) throw new Error(`workspace ${workspace} has no 'origin' remote any more`);
    // A task's commit is on its own task branch; a step's moves the run branch (the next base).
    const { kind, taskId } = parseQueueStepId(job.stepId);
    const branch =
      kind === 'task' && taskId !== undefined ? taskBranch(runId, taskId) : runBranch(runId);
    await landCommit(workspace, repo, branch, result.commit);
  } catch (err) {
    return { ok: false, error: `the step's commit could not be fetched: ${errorMessage(err)}` };
  }
  recordReportedChanges(workspace, job, result, log);
  return outcome;
}

/**
 * The orchestrator's step before applying any job outcome: git-mode results (they carry a
 * commit) are landed once the run's shipped log chunks are written; others pass as they are.
 */
export async function landJobOutcome(
  job: Pick<JobSpec, 'runId' | 'stepId' | 'attempt'>,
  outcome: JobOutcome,
  deps: {
    workspaceOf(runId: string): Promise<string>;
    logsSettled(runId: string): Promise<void>;
    log: Log;
  },
): Promise<JobOutcome> {
  const runId = job.runId;
  if (!outcome.ok || typeof outcome.result.commit !== 'string') return outcome;
  await deps.logsSettled(runId);
  try {
    return await landOutcome(await deps.workspaceOf(runId), job, outcome, deps.log);
  } catch (err) {
    deps.log.warn({ runId, err: errorMessage(err) }, 'landing a commit failed');
    return outcome;
  }
}
