/**
 * Stages the CodeMachine layout's plain files in a commit's batch. Every write is atomic, mode
 * 0600, and refuses symlinks anywhere below the workspace; a file already holding the wanted
 * bytes is left alone (no fsync).
 */
import path from 'node:path';
import { DEFAULT_DIRECTIVE } from '../../directive.ts';
import { writeFileAtomic } from '../../ledger/atomic-write.ts';
import type { DurableBatch, StagedFile } from '../../ledger/durable-batch.ts';
import { readTextInside, STATE_FILE_MODE } from '../../ledger/safe-path.ts';
import type { CodemachinePaths } from './paths.ts';

/** The directive file's content at the start of every step. */
export const DEFAULT_DIRECTIVE_TEXT = `${JSON.stringify(DEFAULT_DIRECTIVE, null, 2)}\n`;

/**
 * Stages `text` for one of the layout's files unless it already holds exactly that (null);
 * `current`: the file's text the caller has just read (null: missing), not read again.
 */
export function writeLayoutFile(
  paths: CodemachinePaths,
  file: string,
  text: string,
  io: DurableBatch,
  current?: string | null,
): StagedFile | null {
  // The workspace folder is trusted; everything from .codemachine down is checked for symlinks.
  const workspace = path.dirname(paths.root);
  if ((current === undefined ? readTextInside(workspace, file) : current) === text) return null;
  return io.writeFile(file, text, { root: workspace, mkdirs: true, mode: STATE_FILE_MODE });
}

/** Writes `text` to one of the layout's files now, durably, unless it already holds exactly that. */
export function writeLayoutFileNow(paths: CodemachinePaths, file: string, text: string): void {
  const workspace = path.dirname(paths.root);
  if (readTextInside(workspace, file) === text) return;
  writeFileAtomic(file, text, { root: workspace, mkdirs: true, mode: STATE_FILE_MODE });
}

/** Resets memory/directive.json to `{"action": "continue"}` (CodeMachine does before each step). */
export function resetDirective(paths: CodemachinePaths, io: DurableBatch): void {
  writeLayoutFile(paths, paths.directive, DEFAULT_DIRECTIVE_TEXT, io);
}
