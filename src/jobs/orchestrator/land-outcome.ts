/**
 * What the bridge does with a git-mode job's result before the engine sees it: fetch the commit
 * the worker pushed and move the bridge's run branch to it (the next step's base). A commit that cannot be fetched turns
 * the outcome into a failure: the step's work must never be dropped silently.
 */

import type { Log } from '../../log.ts';
import { landCommit } from '../git/bridge-git.ts';
import { gitProbe, runBranch } from '../git/run-git.ts';
import { errorMessage } from '../queue/outcome.ts';
import type { JobOutcome } from '../queue/port.ts';
import { parseStepJobResult } from './job-payload.ts';

/** The outcome to apply: unchanged, or a failure when the pushed commit could not be landed. */
export async function landOutcome(
  workspace: string,
  runId: string,
  outcome: JobOutcome,
): Promise<JobOutcome> {
  if (!outcome.ok) return outcome;
  const result = parseStepJobResult(outcome.result);
  if (result?.commit === undefined) return outcome;
  try {
    const repo = await gitProbe(workspace, ['remote', 'get-url', 'origin']);
    if (repo === null) throw new Error(`workspace ${workspace} has no 'origin' remote any more`);
    await landCommit(workspace, repo, runBranch(runId), result.commit);
  } catch (err) {
    return { ok: false, error: `the step's commit could not be fetched: ${errorMessage(err)}` };
  }
  return outcome;
}

/**
 * The orchestrator's step before applying any job outcome: git-mode results (they carry a
 * commit) are landed once the run's shipped log chunks are written; others pass as they are.
 */
export async function landJobOutcome(
  runId: string,
  outcome: JobOutcome,
  deps: {
    workspaceOf(runId: string): Promise<string>;
    logsSettled(runId: string): Promise<void>;
    log: Log;
  },
): Promise<JobOutcome> {
  if (!outcome.ok || typeof outcome.result.commit !== 'string') return outcome;
  await deps.logsSettled(runId);
  try {
    return await landOutcome(await deps.workspaceOf(runId), runId, outcome);
  } catch (err) {
    deps.log.warn({ runId, err: errorMessage(err) }, 'landing a commit failed');
    return outcome;
  }
}
