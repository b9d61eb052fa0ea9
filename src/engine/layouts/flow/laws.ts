/**
 * flow's iron laws (seed 003) as a pure check the engine applies to every commit of a
 * flow-layout run, so a transition that would break them is refused instead of written:
 * - no phase advance without an activity: when the current step moves forward, every step it
 *   leaves behind finished (completed or skipped: both are recorded as activities);
 * - never `completed` with no activities: a run completes only after some step finished.
 */
import type { RunState } from '../../model.ts';

function finished(state: RunState, index: number): boolean {
  const s = state.steps[index];
  return (
    s !== undefined && (s.excluded === true || s.status === 'completed' || s.status === 'skipped')
  );
}

/** Why the commit from `before` to `after` breaks an iron law, or null when it keeps them. */
export function flowLawViolation(before: RunState, after: RunState): string | null {
  if (after.cursor > before.cursor) {
    for (let i = before.cursor; i < after.cursor; i++) {
      if (!finished(after, i)) {
        const id = after.steps[i]?.id ?? String(i);
        return `the phase would advance past step ${id}, which recorded no finishing activity`;
      }
    }
  }
  if (after.status === 'completed' && before.status !== 'completed') {
    if (
      !after.steps.some((s) => !s.excluded && (s.status === 'completed' || s.status === 'skipped'))
    ) {
      return 'the run would complete without any recorded activity';
    }
  }
  return null;
}
