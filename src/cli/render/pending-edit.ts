/**
 * A hand edit of a layout's watched file (codemachine's `.codemachine/template.json`) that no
 * process has applied yet (no bridge runs to watch the file): `status` asks the layout's
 * `handEdits.pendingLines` hook what the next command will do, read-only, so the human does not
 * see the old state as if the edit were lost.
 */
import { layoutModule } from '../../engine/layouts/index.ts';
import { isTerminal, type RunState } from '../../engine/model.ts';

/**
 * The pending hand edit of a run whose layout watches a hand-edited file, described; empty for
 * other layouts, finished runs and an unchanged file. Never writes: applying it is for a command
 * to the run.
 */
export async function pendingEditLines(state: RunState): Promise<string[]> {
  const hooks = layoutModule(state.layout)?.handEdits;
  if (hooks?.pendingLines === undefined || isTerminal(state.status)) return [];
  return hooks.pendingLines(state);
}
