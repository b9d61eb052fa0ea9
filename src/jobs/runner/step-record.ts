/**
 * A step's git bookkeeping in a workspace the bridge reads: a snapshot when it starts, and after
 * it the console's diff (`<log>.diff`) and the checkpoint's changed-files list
 * (`changes-<step>-<attempt>.json`). When the diff cannot be made, or leaves paths out, the
 * reason is said once: a `[phasebridge]` line in the step's log, the diff file's text, and the
 * changes file's note the checkpoint message shows ("no diff: <reason>").
 */
import fs from 'node:fs';
import { openInside } from '../../engine/ledger/safe-path.ts';
import { gitHead, recordChanges } from './git-changes.ts';
import {
  diffFileOf,
  type Snapshot,
  snapshotTree,
  writeDiffFile,
  writeStepDiff,
} from './git-diff.ts';
import { confinedRoot } from './output-sink.ts';

/** What is known when the step starts: its snapshot and the commit it starts from. */
export interface StepGitStart {
  before: Snapshot;
  base: string | null;
}

/** Where the step's records go. */
export interface StepRecordPlace {
  workspace: string;
  logFile: string;
  stepId: string;
  attempt: number;
}

/** The start of a step's records; null when the workspace is no git work tree. */
export async function startStepRecord(workspace: string): Promise<StepGitStart | null> {
  const before = await snapshotTree(workspace);
  if (before.tree === null && before.problem === undefined) return null;
  return { before, base: await gitHead(workspace) };
}

/** Writes the step's diff and changed-files list, and says once what could not be made. */
export async function finishStepRecord(start: StepGitStart, at: StepRecordPlace): Promise<void> {
  const note = await diffAndNote(start.before, at);
  const listProblem = await recordChanges(
    at.workspace,
    at.logFile,
    at.stepId,
    at.attempt,
    start.base,
    note,
  );
  const said = [note, listProblem].filter((n) => n !== undefined);
  if (said.length > 0) appendLogNote(at, said.join('; '));
}

/** Writes the diff (or the reason in its place); returns what the user must be told. */
async function diffAndNote(before: Snapshot, at: StepRecordPlace): Promise<string | undefined> {
  const file = diffFileOf(at.logFile);
  let problem = before.problem;
  let leftOut = before.leftOut ?? [];
  if (before.tree !== null) {
    const after = await snapshotTree(at.workspace);
    problem = after.problem;
    leftOut = [...new Set([...leftOut, ...(after.leftOut ?? [])])];
    if (after.tree !== null) {
      problem = await writeStepDiff(at.workspace, before.tree, after.tree, file);
    } else if (problem === undefined) {
      problem = 'the workspace is no git work tree any more';
    }
  }
  const note =
    problem !== undefined
      ? `no diff: ${problem}`
      : leftOut.length > 0
        ? `the diff leaves out what git refused: ${leftOut.join('; ')}`
        : undefined;
  try {
    if (problem !== undefined) writeDiffFile(file, `[phasebridge] ${note}\n`);
    else if (note !== undefined) fs.appendFileSync(file, `\n[phasebridge] ${note}\n`);
  } catch {
    // The log line and the checkpoint still say it.
  }
  return note;
}

/** One `[phasebridge]` line at the end of the step's log (no link followed inside the workspace). */
function appendLogNote(at: StepRecordPlace, text: string): void {
  let fd: number | undefined;
  try {
    fd = openInside(
      confinedRoot(at.workspace, at.logFile),
      at.logFile,
      fs.constants.O_WRONLY | fs.constants.O_APPEND | fs.constants.O_CREAT,
    );
    fs.writeSync(fd, `[phasebridge] ${new Date().toISOString()} ${text}\n`);
  } catch {
    // The checkpoint's note and the diff file still say it.
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}
