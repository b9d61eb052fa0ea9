/**
 * CodeMachine users steer a run by editing `.codemachine/template.json` (remove steps from
 * completedSteps to re-run them, clear it or delete the file to start over). The edit is taken
 * before the next command to the run and at start-up, and recorded in the ledger as a human
 * action from a file edit; an unreadable file is reported and never resets the run.
 */
import { checkHandEdit, FILE_EDIT_ACTOR } from '../../engine/layouts/codemachine/index.ts';
import { isTerminal } from '../../engine/model.ts';
import type { Log } from '../../log.ts';
import type { RunDriver } from './run-driver.ts';

/** Applies a pending hand edit of the run's template.json; returns what was applied. */
export async function applyHandEdit(
  driver: RunDriver,
  runId: string,
  log: Log,
): Promise<'none' | 'revert' | 'reset' | 'unreadable'> {
  const state = await driver.peek(runId);
  if (state.layout !== 'codemachine' || isTerminal(state.status)) return 'none';
  const edit = checkHandEdit(state);
  if (edit.kind === 'unreadable') {
    log.warn(
      { runId, reason: edit.reason },
      'template.json cannot be read; the run keeps its progress',
    );
    return 'unreadable';
  }
  if (edit.kind === 'none') return 'none';
  const command =
    edit.kind === 'reset'
      ? ({ type: 'reset', source: 'file-edit', actor: FILE_EDIT_ACTOR } as const)
      : revertTo(state.steps, edit.toIndex);
  if (!command) return 'none';
  // Keyed by the state it was seen in, so a retry after a crash does not apply it twice.
  const result = await driver.commit(runId, `file-edit:${runId}:${state.seq}`, command);
  if (!result.ok) {
    log.warn({ runId, reason: result.rejection.message }, 'template.json edit not applied');
    return 'none';
  }
  log.info({ runId, edit: edit.kind }, 'applied a hand edit of template.json');
  return edit.kind;
}

function revertTo(steps: readonly { id: string; index: number }[], index: number) {
  const step = steps.find((s) => s.index === index);
  return step
    ? ({ type: 'revert', toStepId: step.id, source: 'file-edit', actor: FILE_EDIT_ACTOR } as const)
    : null;
}
