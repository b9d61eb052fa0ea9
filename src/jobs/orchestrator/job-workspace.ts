/**
 * Where a job's agent works, on the worker's side. `shared`: the workspace path of the job,
 * which must exist here (mounted at the same path as on the bridge). `git`: the run's work
 * folder of this worker, checked out at the job's base commit, with the run's spec written
 * where the layout expects it; after a successful agent its changes are committed and pushed.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { writeFileAtomic } from '../../engine/ledger/atomic-write.ts';
import { readTextInside, STATE_FILE_MODE } from '../../engine/ledger/safe-path.ts';
import { ResourceError } from '../../errors.ts';
import type { GitWorkFolders } from '../git/worker-git.ts';
import type { QueuedJob } from '../queue/port.ts';
import type { JobTimings, StepJobPayload, StepJobResult } from './job-payload.ts';
import { runFiles } from './run-files.ts';
import { writePayloadInputs } from './run-inputs.ts';

/** Where a job runs on this worker. */
export interface JobPlace {
  /** The agent's cwd. */
  dir: string;
  /** True when the bridge does not see `dir` (git mode): logs travel back, changes are pushed. */
  remote: boolean;
}

/** True when `dir` is an existing folder. */
function isDirectory(dir: string): boolean {
  try {
    return fs.statSync(dir).isDirectory();
  } catch {
    return false;
  }
}

/**
 * Prepares the folder the job's agent runs in. ResourceError with the fix when a shared
 * workspace is not on this machine or git mode has no work folders.
 */
export async function prepareWorkspace(
  job: QueuedJob,
  p: StepJobPayload,
  folders: GitWorkFolders | undefined,
): Promise<JobPlace> {
  const ref = p.workspace;
  if (ref.mode === 'shared') {
    if (!isDirectory(ref.path)) {
      throw new ResourceError(
        `workspace ${ref.path} does not exist on worker host ${os.hostname()}: shared workspace mode needs it mounted at the same path on every worker (or use PHASEBRIDGE_WORKSPACE_MODE=git)`,
      );
    }
    return { dir: ref.path, remote: false };
  }
  if (folders === undefined) {
    throw new ResourceError(
      'this worker has no work folder for git-mode jobs (no PHASEBRIDGE_HOME)',
    );
  }
  const folder = p.kind === 'task' ? `${job.runId}+task+${p.taskId}` : job.runId;
  const dir = await folders.checkout(folder, ref);
  if (p.spec !== undefined) {
    const { specFile } = runFiles(dir, p.layout, job.runId);
    if (readTextInside(dir, specFile) !== p.spec) {
      // Scratch, as the directive and prompt files: the payload carries the spec and it is
      // compared and rewritten before every job, so no fsync (two, on a loaded disk tens of ms
      // each, on the worker's thread before the agent may start).
      writeFileAtomic(specFile, p.spec, {
        mode: STATE_FILE_MODE,
        root: dir,
        mkdirs: true,
        durable: false,
      });
    }
  }
  if (p.inputs !== undefined) writePayloadInputs(dir, job.runId, p.inputs);
  return { dir, remote: true };
}

/** Paths (relative to the work folder) the commit must leave out: the layout's spec and directive. */
export function layoutFilesOf(dir: string, p: StepJobPayload, runId: string): string[] {
  const files = runFiles(dir, p.layout, runId);
  return [files.specFile, files.directiveFile].map((f) => path.relative(dir, f));
}

/**
 * Git mode, after a successful agent: commits and pushes the run branch, adding the commit and
 * the changed files to `result`; a failed push fails the step (its work never reached the bridge).
 */
export async function pushChanges(
  result: StepJobResult,
  dir: string,
  job: QueuedJob,
  p: StepJobPayload,
  folders: GitWorkFolders,
  timings: JobTimings,
): Promise<void> {
  if (p.workspace.mode !== 'git') return;
  const message = `phasebridge: run ${job.runId}, ${p.kind} ${p.stepId}, attempt ${job.attempt}`;
  try {
    const pushed = await folders.commitAndPush(
      dir,
      p.workspace,
      message,
      layoutFilesOf(dir, p, job.runId),
      () => {
        timings.committed = Date.now();
      },
    );
    timings.pushed = Date.now();
    result.commit = pushed.commit;
    result.changedFiles = pushed.changedFiles;
    if (p.kind === 'step') {
      result.changes = { base: p.workspace.baseCommit, files: pushed.fileChanges };
    }
  } catch (err) {
    result.ok = false;
    result.failure = `the agent's changes could not be pushed: ${(err as Error).message}`;
  }
}
