/**
 * Reading template.json back from disk, and checking it for hand edits against the document the
 * run's state says we last wrote.
 */
import path from 'node:path';
import { readTextInside } from '../../ledger/safe-path.ts';
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

/**
 * Reads `<workspace>/.codemachine/template.json` at `file` without following a symlink anywhere
 * below the workspace (a planted link throws UnsafePathError naming it).
 */
export function readTemplateAt(file: string): TemplateRead {
  // The file sits in `<workspace>/.codemachine/`: the workspace is the trusted root.
  const text = readTextInside(path.dirname(path.dirname(file)), file);
  if (text === null) return { kind: 'missing' };
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
