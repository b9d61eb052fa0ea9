/**
 * Writes the CodeMachine layout's plain files. Every write is atomic and refuses symlinks
 * anywhere below the workspace; a file already holding the wanted bytes is left alone (no fsync).
 */
import fs from 'node:fs';
import path from 'node:path';
import { DEFAULT_DIRECTIVE } from '../../directive.ts';
import { lstatNoSymlink, writeFileAtomic } from '../../ledger/atomic-write.ts';
import type { CodemachinePaths } from './paths.ts';

/** The directive file's content at the start of every step. */
export const DEFAULT_DIRECTIVE_TEXT = `${JSON.stringify(DEFAULT_DIRECTIVE, null, 2)}\n`;

/** Current content of `file`, or null when it does not exist (symlinks refused). */
export function readIfExists(file: string): string | null {
  if (lstatNoSymlink(file) === null) return null;
  const fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
  try {
    return fs.readFileSync(fd, 'utf8');
  } finally {
    fs.closeSync(fd);
  }
}

/** Writes `text` to one of the layout's files unless it already holds exactly that. */
export function writeLayoutFile(paths: CodemachinePaths, file: string, text: string): void {
  if (readIfExists(file) === text) return;
  // The workspace is trusted; everything from .codemachine down is checked for symlinks.
  writeFileAtomic(file, text, { root: path.dirname(paths.root), mkdirs: true });
}

/** Resets memory/directive.json to `{"action": "continue"}` (CodeMachine does before each step). */
export function resetDirective(paths: CodemachinePaths): void {
  writeLayoutFile(paths, paths.directive, DEFAULT_DIRECTIVE_TEXT);
}
