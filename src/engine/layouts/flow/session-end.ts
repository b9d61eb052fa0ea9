/**
 * flow's SessionEnd (seed 003: `hooks/scripts/session-end-state.sh`): when the process driving
 * a run stops while the run is active, a `session_end` line with the resumable next action is
 * appended to its events.jsonl. run.yaml is not touched (status changes are the user's decision
 * on resume). One line per ledger position: a second stop with nothing done in between adds none.
 */

import { lstatNoSymlink, readTextInside } from '../../ledger/safe-path.ts';
import type { RunState } from '../../model.ts';
import { appendEventsJsonl, readEventsJsonl } from './events-file.ts';
import { flowPaths } from './format.ts';

/** Appends the run's session_end for a stop at `at`; false when the run has no flow files or it is written. */
export function recordFlowSessionEnd(state: RunState, at: string, reason: string): boolean {
  if (state.layout !== 'flow') return false;
  const p = flowPaths(state.workspace, state.id);
  const dir = lstatNoSymlink(p.runDir);
  if (dir === null || !dir.isDirectory()) return false;
  const existing = readTextInside(state.workspace, p.events);
  const written = readEventsJsonl(existing ?? '').some(
    (l) => l.type === 'session_end' && l.ledger_seq === state.seq,
  );
  if (written) return false;
  const step = state.steps[state.cursor];
  const line: Record<string, unknown> = {
    type: 'session_end',
    at,
    run_id: state.id,
    ledger_seq: state.seq,
    ...(step === undefined ? {} : { phase: step.id }),
    next_action: state.checkpoint === null ? 'resume' : `answer checkpoint ${state.checkpoint.id}`,
    reason,
  };
  appendEventsJsonl(state.workspace, p.events, existing, [line]);
  return true;
}
