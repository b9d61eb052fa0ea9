/**
 * codemachine's hand-edit hooks (LayoutModule `handEdits`): what an edit of template.json asks
 * of a run, as the commands that carry it out (the orchestrator commits them) or the words of
 * why none does, and the lines `status` shows for an edit no process has applied yet. Reads
 * template.json, never writes. Not the layout's index: `status` must not load registry.db's
 * SQLite code.
 */
import { currentStep, type RunState } from '../../model.ts';
import type { HandEditCheck, HandEditCommand } from '../module.ts';
import { FILE_EDIT_ACTOR, type HandEdit, skipTargets } from './hand-edits.ts';
import { checkHandEdit } from './template-file.ts';

const NEXT = 'at the next command to the run';

/** What the edit of the run's template.json asks for (read-only). */
export function checkTemplateEdit(state: RunState): HandEditCheck {
  const edit = checkHandEdit(state);
  if (edit.kind === 'unreadable') {
    return {
      kind: 'unreadable',
      reason: edit.reason,
      text: `template.json cannot be read (${edit.reason}); the run keeps its progress`,
    };
  }
  if (edit.kind === 'none') return { kind: 'none' };
  const commands = commandsFor(state, edit);
  if (typeof commands === 'string') return { kind: 'ignored', text: commands };
  return { kind: 'apply', edit: edit.kind, commands };
}

/** The commands carrying out an edit, in order, or why none does. */
function commandsFor(
  state: RunState,
  edit: Exclude<HandEdit, { kind: 'none' | 'unreadable' }>,
): HandEditCommand[] | string {
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
  const commands: HandEditCommand[] = ahead.map((step) => ({
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

/** The pending edit of the run's template.json, described (read-only; never throws). */
export function pendingTemplateEditLines(state: RunState): string[] {
  try {
    return describeHandEdit(state, checkHandEdit(state));
  } catch (err) {
    // A planted symlink or an unreadable folder: say so rather than fail the whole status.
    const reason = err instanceof Error ? err.message : String(err);
    return [`template.json cannot be checked: ${reason}`];
  }
}
