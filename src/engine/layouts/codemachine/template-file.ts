/**
 * Reading template.json back from disk, and checking it for hand edits against the document the
 * run's state says we last wrote.
 */
import fs from 'node:fs';
import { lstatNoSymlink } from '../../ledger/atomic-write.ts';
import type { RunState } from '../../model.ts';
import { detectHandEdit, type HandEdit } from './hand-edits.ts';
import { codemachinePaths } from './paths.ts';
import { buildTemplate } from './template.ts';
import { parseTemplateText, type TemplateTracking } from './template-schema.ts';

/** What is in template.json on disk. */
export type TemplateRead =
  | { kind: 'missing' }
  | { kind: 'ok'; value: TemplateTracking; text: string }
  | { kind: 'unparseable'; error: string; text: string };

/** Reads `file` without following a symlink (a symlink throws CorruptStateError). */
export function readTemplateAt(file: string): TemplateRead {
  if (lstatNoSymlink(file) === null) return { kind: 'missing' };
  let text: string;
  try {
    const fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
    try {
      text = fs.readFileSync(fd, 'utf8');
    } finally {
      fs.closeSync(fd);
    }
  } catch (err) {
    // Deleted between the lstat and the open: the same as never there.
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { kind: 'missing' };
    throw err;
  }
  const parsed = parseTemplateText(text);
  return parsed.ok
    ? { kind: 'ok', value: parsed.value, text }
    : { kind: 'unparseable', error: parsed.error, text };
}

/** Reads `<workspace>/.codemachine/template.json`. */
export function readTemplateFile(workspace: string): TemplateRead {
  return readTemplateAt(codemachinePaths(workspace).template);
}

/** Compares a read file with the document `lastWritten`. */
export function detectFromRead(lastWritten: TemplateTracking, read: TemplateRead): HandEdit {
  if (read.kind === 'missing') return detectHandEdit(lastWritten, null);
  if (read.kind === 'unparseable') return detectHandEdit(lastWritten, 'unparseable', read.error);
  return detectHandEdit(lastWritten, read.value);
}

/**
 * Checks a codemachine-layout run's template.json for a hand edit. Call it with the state the
 * last commit returned (the file is rewritten before commit returns, so it then matches that
 * state unless someone edited it). Turn a revert/reset into a command with `handEditCommand`.
 */
export function checkHandEdit(state: RunState): HandEdit {
  return detectFromRead(buildTemplate(state), readTemplateFile(state.workspace));
}
