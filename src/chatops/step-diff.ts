/**
 * A step's diff as a file for chat (issue 36, "see before you press"): the `<log>.diff` the
 * worker wrote beside the step's log, read without following a link and at most
 * DIFF_FILE_MAX_BYTES, with a clear note at its end when it was cut (here or by the worker).
 * Used by the checkpoint's Diff button, the `diff` chat verb and `phasebridge diff`.
 */
import fs from 'node:fs';
import type { RichText } from '../bridges/messages.ts';
import { code, plain, rich } from '../bridges/render-text.ts';
import { lstatNoSymlink, openInside } from '../engine/ledger/safe-path.ts';
import type { RunState, StepState } from '../engine/model.ts';
import { stepLogPath } from '../jobs/orchestrator/run-files.ts';
import { diffFileOf, MAX_DIFF_BYTES } from '../jobs/runner/git-diff.ts';
import { changedFilesLines, readChangedFiles } from './changed-files.ts';

/** Most bytes of a diff sent as a file. */
export const DIFF_FILE_MAX_BYTES = MAX_DIFF_BYTES;
/** Read beyond it: the worker's own cut (at the same size) ends with its notes, kept whole. */
const NOTES_MARGIN = 16 * 1024;
/** The worker's own line when it cut a diff (git-diff.ts). */
const WORKER_CUT = '[phasebridge] diff cut at';

/** A step's diff, ready to send. */
export interface StepDiffFile {
  name: string;
  attempt: number;
  data: Uint8Array;
  /** True when the diff is longer than what is sent. */
  cut: boolean;
  /** The changed-files lines with +/- ("src/a.ts +3 −1"), when the step has the list. */
  files?: string[];
}

/** The step's diff file path (inside the workspace), for its latest or given attempt. */
export function stepDiffPath(state: RunState, step: StepState, attempt = step.attempt): string {
  return diffFileOf(stepLogPath(state.workspace, state.id, step.id, attempt));
}

/** True when the attempt has a diff file (lstat only: a planted link is not one). */
export function hasStepDiff(state: RunState, step: StepState): boolean {
  if (step.attempt === 0) return false;
  try {
    return lstatNoSymlink(stepDiffPath(state, step))?.isFile() === true;
  } catch {
    return false;
  }
}

/** The attempt's diff as a file, or why there is none. */
export function readStepDiff(
  state: RunState,
  step: StepState,
  attempt = step.attempt,
): StepDiffFile | string {
  if (attempt === 0) return `step ${step.id} has not run yet: it has no diff`;
  let fd: number | undefined;
  let bytes: Buffer;
  let size: number;
  try {
    fd = openInside(state.workspace, stepDiffPath(state, step, attempt), fs.constants.O_RDONLY);
    size = fs.fstatSync(fd).size;
    const buf = Buffer.alloc(Math.min(size, DIFF_FILE_MAX_BYTES + NOTES_MARGIN));
    bytes = buf.subarray(0, fs.readSync(fd, buf, 0, buf.length, 0));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
      return `step ${step.id} (attempt ${attempt}) has no diff: its workspace is no git work tree`;
    }
    return `the diff of step ${step.id} could not be read: ${(err as Error).message}`;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
  const cutHere = size > bytes.length;
  const text = bytes.toString('utf8');
  const note = cutHere
    ? `\n[phasebridge] diff cut at ${DIFF_FILE_MAX_BYTES} bytes of ${size}: the whole diff is beside the step's log on the bridge's host (phasebridge diff ${state.id} ${step.id})\n`
    : '';
  const out: StepDiffFile = {
    name: `${step.id}-${attempt}.diff`,
    attempt,
    data: new TextEncoder().encode(`${text}${note}`),
    cut: cutHere || text.includes(WORKER_CUT),
  };
  const log = stepLogPath(state.workspace, state.id, step.id, attempt);
  const changes = readChangedFiles(state.workspace, log, step.id, attempt);
  if (changes?.base) out.files = changedFilesLines(changes);
  return out;
}

/** The caption of a diff file in chat: whose diff, its files with +/-, and the cut note. */
export function diffCaption(state: RunState, step: StepState, diff: StepDiffFile): RichText {
  const parts = [plain(`Diff of ${step.id}, attempt ${diff.attempt} — run ${state.id}`)];
  if (diff.files !== undefined) parts.push(plain(':\n'), code(diff.files.join('\n')));
  if (diff.cut) {
    parts.push(
      plain(
        `\n✂ Cut at ${DIFF_FILE_MAX_BYTES / (1024 * 1024)} MB: the file ends where it was cut.`,
      ),
    );
  }
  return rich(...parts);
}
