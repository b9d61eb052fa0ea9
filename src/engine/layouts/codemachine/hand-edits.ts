/**
 * Hand edits of template.json, honoured as CodeMachine documents them: removing step N (and
 * later ones) from completedSteps re-runs the run from N; clearing completedSteps or deleting the
 * file starts it over. Pure: the caller reads the file and turns the verdict into a command.
 *
 * Precise rules, comparing the file with the document we last wrote (rebuilt from the ledger):
 * - file deleted → reset.
 * - file unreadable (bad JSON or shape) → unreadable: reported, NEVER a reset (CodeMachine's own
 *   reader falls back to an empty document, which would silently lose progress).
 * - completedSteps empty (or missing) while we had written entries → reset.
 * - some steps we had marked complete (with completedAt) are gone → revert to the lowest of them
 *   (later steps run again anyway, so removing only a middle step re-runs from it too).
 * - steps we had not marked complete now carry a completedAt → skip them ("skipping steps" of
 *   the CodeMachine docs): the current step is skipped now, a later one in advance (see
 *   {@link skipTargets}); earlier or excluded steps cannot be, the entry is dropped.
 * - anything else (formatting, lastUpdated, an unfinished step's session entry, other keys) →
 *   none: the next projection rewrites the file from the run's state.
 */
import type { Command } from '../../commands.ts';
import { type Actor, currentStep, type RunState, type StepState } from '../../model.ts';
import type { TemplateTracking } from './template-schema.ts';

/** What a hand edit of template.json asks for. */
export type HandEdit =
  | { kind: 'none' }
  | { kind: 'revert'; toIndex: number }
  | { kind: 'reset' }
  | { kind: 'skip'; indexes: number[] }
  | { kind: 'unreadable'; reason: string };

/** Reason given for an unparseable file when the reader did not say more. */
const UNREADABLE =
  'template.json is not valid JSON; fix it or delete it (deleting it starts the run over)';

/**
 * Compares the document we last wrote with what is on disk now (`null`: the file is gone;
 * `'unparseable'`: it could not be read, `parseError` saying why).
 */
export function detectHandEdit(
  lastWritten: TemplateTracking,
  onDisk: TemplateTracking | null | 'unparseable',
  parseError?: string,
): HandEdit {
  if (onDisk === null) return { kind: 'reset' };
  if (onDisk === 'unparseable') {
    const reason = parseError ? `${parseError}; fix the file or delete it` : UNREADABLE;
    return { kind: 'unreadable', reason };
  }
  const written = lastWritten.completedSteps ?? {};
  const present = onDisk.completedSteps ?? {};
  if (Object.keys(present).length === 0 && Object.keys(written).length > 0) {
    return { kind: 'reset' };
  }
  const removed = Object.entries(written)
    .filter(([key, data]) => data.completedAt !== undefined && !(key in present))
    .map(([key]) => Number(key));
  if (removed.length > 0) return { kind: 'revert', toIndex: Math.min(...removed) };
  const added = Object.entries(present)
    .filter(
      ([key, data]) => data?.completedAt !== undefined && written[key]?.completedAt === undefined,
    )
    .map(([key]) => Number(key))
    .filter((n) => Number.isSafeInteger(n) && n >= 0)
    .sort((a, b) => a - b);
  return added.length > 0 ? { kind: 'skip', indexes: added } : { kind: 'none' };
}

/** Who a hand edit is attributed to: whoever can write the workspace, known only by the file. */
export const FILE_EDIT_ACTOR: Actor = Object.freeze({
  id: 'file:.codemachine/template.json',
  name: 'template.json edit',
});

/**
 * The engine command that carries out a hand edit (source 'file-edit'), or null when there is
 * nothing to do or the edit names no step of the run. An unreadable file maps to no command.
 */
export function handEditCommand(
  edit: HandEdit,
  state: RunState,
  at: string,
  actor: Actor = FILE_EDIT_ACTOR,
): Command | null {
  if (edit.kind === 'reset') return { type: 'reset', source: 'file-edit', at, actor };
  if (edit.kind !== 'revert') return null;
  const step = state.steps.find((s) => s.index === edit.toIndex);
  if (!step) return null;
  return { type: 'revert', toStepId: step.id, source: 'file-edit', at, actor };
}

/**
 * The steps a `skip` edit can skip: the current step (skipped now) and later steps still to run
 * (skipped ahead: passed over when the run reaches them). Other indexes are not skippable.
 */
export function skipTargets(
  state: RunState,
  indexes: readonly number[],
): { current?: StepState; ahead: StepState[] } {
  const cur = currentStep(state);
  const out: { current?: StepState; ahead: StepState[] } = { ahead: [] };
  for (const step of state.steps) {
    if (!indexes.includes(step.index) || step.excluded) continue;
    if (step === cur) out.current = step;
    else if (step.index > state.cursor && step.status === 'pending') out.ahead.push(step);
  }
  return out;
}
