/**
 * What the bridge does for its unfinished runs when it stops (serve on SIGTERM/SIGINT), after
 * its last commit: each layout with a session end hook marks it in its files (flow runs that are
 * active get flow's `session_end` line, coordinator sessions get state.json's `updated_at`).
 * Nothing in the ledger changes: on the next start the runs go on as they were.
 */
import type { RunsRepo } from '../../db/repositories/runs.ts';
import { layoutModules } from '../../engine/layouts/index.ts';
import type { RunState } from '../../engine/model.ts';
import type { Log } from '../../log.ts';
import { errorMessage } from '../queue/outcome.ts';

/** How many sessions were marked ended, per layout with a session end (flow, coordinator). */
export type SessionEndCount = Record<string, number>;

/**
 * Marks the session end of every unfinished run in the runs index whose layout has one (flow,
 * coordinator), at `now`; never throws (a stop must not fail on it).
 */
export async function endSessions(
  runs: RunsRepo,
  source: { getRun(runId: string): Promise<RunState> },
  log: Log,
  now: Date = new Date(),
): Promise<SessionEndCount> {
  const ending = layoutModules().flatMap((m) =>
    m.sessionEnd ? [[m.name, m.sessionEnd] as const] : [],
  );
  const hooks = new Map(ending);
  const count: SessionEndCount = Object.fromEntries(ending.map(([name]) => [name, 0]));
  const at = now.toISOString();
  let open: Awaited<ReturnType<RunsRepo['list']>>;
  try {
    open = await runs.list({ status: ['active', 'awaiting', 'blocked'] });
  } catch (err) {
    log.warn({ err: errorMessage(err) }, 'session end: runs not listed');
    return count;
  }
  for (const r of open) {
    const hook = hooks.get(r.layout);
    if (hook === undefined) continue;
    try {
      const state = await source.getRun(r.id);
      if (await hook.record(state, at)) count[r.layout] = (count[r.layout] ?? 0) + 1;
    } catch (err) {
      log.warn({ runId: r.id, err: errorMessage(err) }, 'session end not recorded');
    }
  }
  for (const [name, hook] of ending) {
    const n = count[name] ?? 0;
    if (n > 0) log.info(hook.logLine(n));
  }
  return count;
}
