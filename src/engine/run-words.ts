/**
 * Every word a human gave a run, pure (issue 29, the audit export): notes (guidance replies),
 * Request changes reasons, approval reasons and comments, rejection reasons and the words a run
 * was ended with, each with who wrote it, when, and where it went (the step and attempt whose
 * agent reads it, or the run's outcome).
 */
import type { Actor, RunState } from './model.ts';
import { isUndelivered } from './note-destination.ts';

/** What kind of words: the feedback kinds, a rejection's reason, or the reason a run ended with. */
export type RunWordKind = 'guidance' | 'changes' | 'approval' | 'rejection' | 'outcome';

/** One human's words to a run. */
export interface RunWord {
  kind: RunWordKind;
  text: string;
  by: Actor;
  at: string;
  /** The checkpoint they answered or were given at. */
  checkpointId?: string;
  /** The attempt whose agent reads them; absent for a rejection or an outcome (no agent does). */
  to?: { stepId: string; attempt: number };
  /** Where a note was first kept, when the run went past it and it moved on. */
  forwardedFrom?: { stepId: string; attempt: number };
  /** For words with a `to`: true once that attempt started (its agent was given them). */
  delivered?: boolean;
}

/** Every human's words to the run, oldest first. */
export function runWords(state: RunState): RunWord[] {
  const words: RunWord[] = (state.feedback ?? []).map((f) => ({
    kind: f.kind,
    text: f.text,
    by: f.by,
    at: f.at,
    ...(f.checkpointId !== undefined && { checkpointId: f.checkpointId }),
    to: { stepId: f.stepId, attempt: f.forAttempt },
    ...(f.forwardedFrom !== undefined && {
      forwardedFrom: { stepId: f.forwardedFrom.stepId, attempt: f.forwardedFrom.forAttempt },
    }),
    delivered: !isUndelivered(state, f),
  }));
  const checkpoints = [...state.checkpoints, ...(state.checkpoint ? [state.checkpoint] : [])];
  for (const cp of checkpoints) {
    for (const v of cp.votes) {
      if (v.answer !== 'reject' || !v.reason?.trim()) continue;
      words.push({ kind: 'rejection', text: v.reason, by: v.actor, at: v.at, checkpointId: cp.id });
    }
  }
  const end = state.outcome;
  if (end?.by !== undefined && end.by.id !== 'system' && state.status === 'cancelled') {
    words.push({ kind: 'outcome', text: end.reason, by: end.by, at: state.updatedAt });
  }
  return words.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
}
