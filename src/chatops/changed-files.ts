/**
 * What a step changed, for its checkpoint message: read from the `changes-<step>-<attempt>.json`
 * the worker wrote beside the step's log (no link followed), and rendered as a compact list with
 * +/- counts, at most 10 files, then "and N more".
 */
import fs from 'node:fs';
import { openInside } from '../engine/ledger/safe-path.ts';
import { changesFilePath, type StepChanges } from '../jobs/runner/git-changes.ts';

/** Files listed in a message before "and N more". */
export const MAX_LISTED_FILES = 10;

/** The changes of the attempt whose log is `logFile`; undefined when there are none to show. */
export function readChangedFiles(
  workspace: string,
  logFile: string,
  stepId: string,
  attempt: number,
): StepChanges | undefined {
  let fd: number | undefined;
  try {
    fd = openInside(workspace, changesFilePath(logFile, stepId, attempt), fs.constants.O_RDONLY);
    const parsed = JSON.parse(fs.readFileSync(fd, 'utf8')) as StepChanges;
    if (typeof parsed.base !== 'string' || !Array.isArray(parsed.files)) return undefined;
    return parsed;
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/** "src/login.ts +12 −3" lines, then "and N more"; "no files changed" for an empty list. */
export function changedFilesLines(changes: StepChanges): string[] {
  if (changes.files.length === 0) return ['no files changed'];
  const shown = changes.files.slice(0, MAX_LISTED_FILES).map((f) => {
    if (f.added === null && f.removed === null) return `${f.path} (new or binary)`;
    return `${f.path} +${f.added ?? 0} −${f.removed ?? 0}`;
  });
  const more = changes.files.length - shown.length;
  return more > 0 ? [...shown, `and ${more} more`] : shown;
}
