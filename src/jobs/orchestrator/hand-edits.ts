/**
 * CodeMachine users steer a run by editing `.codemachine/template.json` (remove steps from
 * completedSteps to re-run them, clear it or delete the file to start over, add the current
 * step to skip it). A running bridge's supervisor applies an edit as soon as it sees it; every
 * command to the run and start-up check too. The edit is recorded in the ledger as a human
 * action from a file edit; an unreadable file is reported and never resets the run.
 */
import { checkHandEdit, FILE_EDIT_ACTOR } from '../../engine/layouts/codemachine/index.ts';
import { currentStep, isTerminal, type RunState } from '../../engine/model.ts';
import type { Log } from '../../log.ts';
import type { CommandInput } from './job-results.ts';
import type { RunDriver } from './run-driver.ts';

/** What a check of template.json did; `text` says why for 'unreadable' and 'ignored'. */
export type HandEditResult =
  | { kind: 'none' | 'revert' | 'reset' | 'skip' }
  | { kind: 'unreadable' | 'ignored'; text: string };

/** Applies a pending hand edit of the run's template.json; returns what was applied. */
export async function applyHandEdit(
  driver: RunDriver,
  runId: string,
  log: Log,
): Promise<HandEditResult> {
  const state = await driver.peek(runId);
  if (state.layout !== 'codemachine' || isTerminal(state.status)) return { kind: 'none' };
  const edit = checkHandEdit(state);
  if (edit.kind === 'unreadable') {
    log.warn(
      { runId, reason: edit.reason },
      'template.json cannot be read; the run keeps its progress',
    );
    return {
      kind: 'unreadable',
      text: `template.json cannot be read (${edit.reason}); the run keeps its progress`,
    };
  }
  if (edit.kind === 'none') return { kind: 'none' };
  const command = commandFor(state, edit);
  if (typeof command === 'string') return { kind: 'ignored', text: command };
  // Keyed by the state it was seen in, so a retry after a crash does not apply it twice.
  const result = await driver.commit(runId, `file-edit:${runId}:${state.seq}`, command);
  if (!result.ok) {
    log.warn({ runId, reason: result.rejection.message }, 'template.json edit not applied');
    return { kind: 'ignored', text: `template.json edit not applied: ${result.rejection.message}` };
  }
  log.info({ runId, edit: edit.kind }, 'applied a hand edit of template.json');
  return { kind: edit.kind };
}

type Edit =
  | { kind: 'revert'; toIndex: number }
  | { kind: 'reset' }
  | { kind: 'skip'; indexes: number[] };

/** The command carrying out an edit, or why none does. */
function commandFor(state: RunState, edit: Edit): CommandInput | string {
  if (edit.kind === 'reset') return { type: 'reset', source: 'file-edit', actor: FILE_EDIT_ACTOR };
  if (edit.kind === 'revert') {
    const step = state.steps.find((s) => s.index === edit.toIndex);
    if (step)
      return { type: 'revert', toStepId: step.id, source: 'file-edit', actor: FILE_EDIT_ACTOR };
    return `template.json names step ${edit.toIndex}, which this run does not have`;
  }
  const current = currentStep(state);
  if (current && edit.indexes.includes(current.index)) {
    return {
      type: 'skip',
      stepId: current.id,
      reason: 'marked completed in template.json',
      actor: FILE_EDIT_ACTOR,
    };
  }
  const named = edit.indexes.join(', ');
  return `template.json marks step ${named} completed, but only the current step (${current?.index ?? 'none'}) can be skipped that way; the entry is dropped`;
}
