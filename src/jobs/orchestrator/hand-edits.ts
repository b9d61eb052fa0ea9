/**
 * CodeMachine users steer a run by editing `.codemachine/template.json` (remove steps from
 * completedSteps to re-run them, clear it or delete the file to start over, add the current
 * step, or a later one, to skip it). A running bridge's supervisor applies an edit as soon as it sees it; every
 * command to the run and start-up check too. The edit is recorded in the ledger as a human
 * action from a file edit; an unreadable file is reported and never resets the run.
 */
import {
  checkHandEdit,
  FILE_EDIT_ACTOR,
  skipTargets,
} from '../../engine/layouts/codemachine/index.ts';
import { layoutModule } from '../../engine/layouts/index.ts';
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
  if (layoutModule(state.layout)?.handEdits === undefined || isTerminal(state.status)) {
    return { kind: 'none' };
  }
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
  const commands = commandsFor(state, edit);
  if (typeof commands === 'string') return { kind: 'ignored', text: commands };
  for (const [i, command] of commands.entries()) {
    // Keyed by the state it was seen in, so a retry after a crash does not apply it twice.
    const key =
      i === 0 ? `file-edit:${runId}:${state.seq}` : `file-edit:${runId}:${state.seq}:${i}`;
    const result = await driver.commit(runId, key, command);
    if (!result.ok) {
      log.warn({ runId, reason: result.rejection.message }, 'template.json edit not applied');
      return {
        kind: 'ignored',
        text: `template.json edit not applied: ${result.rejection.message}`,
      };
    }
  }
  log.info({ runId, edit: edit.kind }, 'applied a hand edit of template.json');
  return { kind: edit.kind };
}

type Edit =
  | { kind: 'revert'; toIndex: number }
  | { kind: 'reset' }
  | { kind: 'skip'; indexes: number[] };

/** The commands carrying out an edit, in order, or why none does. */
function commandsFor(state: RunState, edit: Edit): CommandInput[] | string {
  if (edit.kind === 'reset') {
    return [{ type: 'reset', source: 'file-edit', actor: FILE_EDIT_ACTOR }];
  }
  if (edit.kind === 'revert') {
    const step = state.steps.find((s) => s.index === edit.toIndex);
    if (step)
      return [{ type: 'revert', toStepId: step.id, source: 'file-edit', actor: FILE_EDIT_ACTOR }];
    return `template.json names step ${edit.toIndex}, which this run does not have`;
  }
  const { current, ahead } = skipTargets(state, edit.indexes);
  const reason = 'marked completed in template.json';
  // Later steps first: skipping the current step moves the cursor onto them.
  const commands: CommandInput[] = ahead.map((step) => ({
    type: 'skip',
    stepId: step.id,
    ahead: true,
    reason,
    actor: FILE_EDIT_ACTOR,
  }));
  if (current) commands.push({ type: 'skip', stepId: current.id, reason, actor: FILE_EDIT_ACTOR });
  if (commands.length > 0) return commands;
  const named = edit.indexes.join(', ');
  const at = currentStep(state)?.index ?? 'none';
  return `template.json marks step ${named} completed, but only the current step (${at}) or a later one can be skipped that way; the entry is dropped`;
}
