/**
 * What the bridge does for its unfinished runs when it stops (serve on SIGTERM/SIGINT), after
 * its last commit: flow runs that are active (phasebridge active or awaiting) get flow's
 * `session_end` line, coordinator sessions get state.json's `updated_at`. Nothing in the ledger
 * changes: on the next start the runs go on as they were.
 */
import type { RunsRepo } from '../../db/repositories/runs.ts';
import { recordCoordinatorSessionEnd } from '../../engine/layouts/coordinator/index.ts';
import { recordFlowSessionEnd } from '../../engine/layouts/flow/session-end.ts';
import type { RunState } from '../../engine/model.ts';
import type { Log } from '../../log.ts';
import { errorMessage } from '../queue/outcome.ts';

/** How many sessions were marked ended. */
export interface SessionEndCount {
  flow: number;
  coordinator: number;
}

/**
 * Marks the session end of every unfinished flow and coordinator run in the runs index, at
 * `now`; never throws (a stop must not fail on it).
 */
export async function endSessions(
  runs: RunsRepo,
  source: { getRun(runId: string): Promise<RunState> },
  log: Log,
  now: Date = new Date(),
): Promise<SessionEndCount> {
  const count: SessionEndCount = { flow: 0, coordinator: 0 };
  const at = now.toISOString();
  let open: Awaited<ReturnType<RunsRepo['list']>>;
  try {
    open = await runs.list({ status: ['active', 'awaiting', 'blocked'] });
  } catch (err) {
    log.warn({ err: errorMessage(err) }, 'session end: runs not listed');
    return count;
  }
  for (const r of open) {
    if (r.layout !== 'flow' && r.layout !== 'coordinator') continue;
    try {
      const state = await source.getRun(r.id);
      // flow's SessionEnd marks active runs only; a blocked one already says why it stopped.
      const active = state.status === 'active' || state.status === 'awaiting';
      if (active && recordFlowSessionEnd(state, at, 'phasebridge stopped')) count.flow++;
      if (recordCoordinatorSessionEnd(state, at)) count.coordinator++;
    } catch (err) {
      log.warn({ runId: r.id, err: errorMessage(err) }, 'session end not recorded');
    }
  }
  if (count.flow > 0) log.info(`flow: ${count.flow} active FlowRun(s) persisted`);
  if (count.coordinator > 0) {
    log.info(`coordinator: ${count.coordinator} session(s) persisted`);
  }
  return count;
}
