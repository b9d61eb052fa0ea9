/**
 * A hand edit of `.codemachine/template.json` that no process has applied yet (no bridge runs to
 * watch the file): `status` reads it and says what the next command will do, read-only, so the
 * human does not see the old state as if the edit were lost.
 */
// Not the layout's index: it loads registry.db's SQLite code, which `status` does not need.
import { type HandEdit, skipTargets } from '../../engine/layouts/codemachine/hand-edits.ts';
import { checkHandEdit } from '../../engine/layouts/codemachine/template-file.ts';
import { layoutModule } from '../../engine/layouts/index.ts';
import { isTerminal, type RunState } from '../../engine/model.ts';

const NEXT = 'at the next command to the run';

function stepName(state: RunState, index: number): string {
  const step = state.steps.find((s) => s.index === index);
  return step === undefined ? `step ${index}` : `step ${index} (${step.id})`;
}

/** The lines saying what a pending hand edit will do to `state`; none for `none`. */
export function describeHandEdit(state: RunState, edit: HandEdit): string[] {
  switch (edit.kind) {
    case 'none':
      return [];
    case 'unreadable':
      return [`template.json cannot be read (${edit.reason}); the run keeps its progress`];
    case 'reset':
      return [`template.json was edited: the run starts over from step 0 ${NEXT}`];
    case 'revert': {
      const later = edit.toIndex < state.steps.length - 1 ? ' and the steps after it' : '';
      return [
        `template.json was edited: ${stepName(state, edit.toIndex)}${later} will run again ${NEXT}`,
      ];
    }
    case 'skip': {
      const { current, ahead } = skipTargets(state, edit.indexes);
      const skipped = [...(current ? [current] : []), ...ahead].sort((a, b) => a.index - b.index);
      if (skipped.length === 0) {
        return [
          `template.json was edited: step ${edit.indexes.join(', ')} marked completed cannot be skipped (only the current step or a later one can); the entry will be dropped`,
        ];
      }
      const names = skipped.map((s) => stepName(state, s.index)).join(', ');
      return [`template.json was edited: ${names} will be skipped ${NEXT}`];
    }
  }
}

/**
 * The pending hand edit of a run whose layout watches a hand-edited file (codemachine's
 * template.json), described; empty for other layouts, finished runs and an unchanged file.
 * Never writes: applying it is for a command to the run.
 */
export function pendingEditLines(state: RunState): string[] {
  if (layoutModule(state.layout)?.handEdits === undefined || isTerminal(state.status)) return [];
  try {
    return describeHandEdit(state, checkHandEdit(state));
  } catch (err) {
    // A planted symlink or an unreadable folder: say so rather than fail the whole status.
    const reason = err instanceof Error ? err.message : String(err);
    return [`template.json cannot be checked: ${reason}`];
  }
}
