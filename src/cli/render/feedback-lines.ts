/** The reviewers' feedback of a run for `status <run>`: who, when, for which attempt, what. */

import type { FeedbackEntry, RunState } from '../../engine/model.ts';
import { personName } from '../../engine/person-name.ts';
import { formatInstant } from './format.ts';

const KIND: Readonly<Record<FeedbackEntry['kind'], string>> = {
  changes: 'changes requested',
  approval: 'approval note',
  guidance: 'guidance',
};

/** Lines listing every feedback entry, oldest first; none when the run has none. */
export function renderFeedback(state: RunState): string[] {
  const entries = state.feedback ?? [];
  if (entries.length === 0) return [];
  return [
    'feedback from reviewers (oldest first)',
    ...entries.map((f) => {
      const who = personName(f.by);
      const at = f.checkpointId !== undefined ? ` at ${f.checkpointId}` : '';
      return `  ${f.stepId} attempt ${f.forAttempt}: ${KIND[f.kind]} by ${who}, ${formatInstant(f.at)}${at}: ${f.text}`;
    }),
  ];
}
