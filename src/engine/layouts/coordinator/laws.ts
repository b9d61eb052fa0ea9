/**
 * The coordinator's state machine, enforced by the engine for coordinator-layout runs: a commit
 * that would move the session between states the seed does not connect (a revert from
 * VERIFYING to DISCOVERING, say) is refused. A run that ends (failed, cancelled) keeps its
 * state: it is an interrupted session, offered as resume / restart / abort.
 */
import { type RunState, stepApplies, type Workflow } from '../../model.ts';
import {
  type CoordinatorPhase,
  coordinatorPhase,
  coordinatorTransitionProblem,
  STEP_PHASES,
} from './format.ts';

/** Why the commit from `before` to `after` leaves the seed's transitions, or null. */
export function coordinatorLawViolation(before: RunState, after: RunState): string | null {
  return coordinatorTransitionProblem(coordinatorPhase(before), coordinatorPhase(after));
}

/**
 * Why a coordinator-layout run of `workflow` (with this track and conditions) could not follow
 * the seed's transitions step after step, or null: checked at start, so a run never gets stuck
 * on a refused transition.
 */
export function coordinatorWorkflowProblem(
  workflow: Workflow,
  track: string | undefined,
  conditions: readonly string[],
): string | null {
  let from: CoordinatorPhase = 'IDLE';
  for (const s of workflow.steps) {
    if (!stepApplies(s, track, conditions)) continue;
    const to = STEP_PHASES[s.id] ?? 'EXECUTING';
    const problem = coordinatorTransitionProblem(from, to);
    if (problem !== null) {
      return `step ${s.id} would make ${problem}${track === undefined && (workflow.tracks ?? []).length > 0 ? `; choose a track (${workflow.tracks!.join(', ')})` : ''}`;
    }
    from = to;
  }
  return null;
}
