/**
 * Interrupted sessions of a workspace (seed 004 "Resume from Interrupted Session", and flow runs
 * that are `active` or `blocked`): found from the layouts' own files, whoever wrote them, with
 * the seed's summary and the next safe action; resume / restart / abort act on them.
 *   resume  (ours) re-enters the state's action: an open checkpoint is shown again, a blocked
 *           run retries its step (a tasks step only its unfinished tasks), a paused or
 *           interrupted one resumes;
 *   restart cancels our run, clears the session state and starts the workflow again;
 *   abort   cancels our run and removes `.coordinator/` (nothing else: no branch is deleted).
 * A session the coordinator wrote itself (no phasebridge run) can be restarted or aborted.
 */
import fs from 'node:fs';
import { coordinatorPaths } from '../../engine/layouts/coordinator/format.ts';
import { readTextInside } from '../../engine/ledger/safe-path.ts';
import { type FlowStatusCache, flowSessions } from './flow-sessions.ts';

/** One interrupted session. */
export interface InterruptedSession {
  kind: 'coordinator' | 'flow';
  /** coordinator session id, or the flow run id. */
  session: string;
  /** coordinator state (EXECUTING, …) or flow status (active, blocked). */
  state: string;
  /** The phasebridge run behind it, when phasebridge wrote it. */
  runId?: string;
  completed: string[];
  inProgress: string[];
  blockedReason?: string;
  /** What resuming does, in words. */
  nextAction: string;
}

/** What resuming a coordinator session in each state does (the seed's table). */
export const COORDINATOR_RESUME: Readonly<Record<string, string>> = {
  DISCOVERING: 're-run discovery',
  PLANNING: 'show the plan again for confirmation',
  EXECUTING: 'check worker progress and continue (unfinished tasks only)',
  MERGING: 'check merge status and continue the queue',
  VERIFYING: 're-run verification',
  SUMMARIZING: 'generate the summary again',
};

const list = (v: unknown): string[] => (Array.isArray(v) ? v.map(String) : []);

function coordinatorSession(workspace: string): InterruptedSession | null {
  const text = readTextInside(workspace, coordinatorPaths(workspace).state);
  if (text === null) return null;
  let doc: Record<string, unknown>;
  try {
    doc = JSON.parse(text) as Record<string, unknown>;
  } catch {
    return null;
  }
  const state = String(doc.state ?? 'IDLE');
  if (state === 'IDLE') return null;
  const tasks = (doc.tasks ?? {}) as Record<string, unknown>;
  const runId = typeof doc.phasebridge_run_id === 'string' ? doc.phasebridge_run_id : undefined;
  return {
    kind: 'coordinator',
    session: String(doc.session_id ?? 'unknown'),
    state,
    ...(runId === undefined ? {} : { runId }),
    completed: list(tasks.completed),
    inProgress: list(tasks.in_progress),
    nextAction: COORDINATOR_RESUME[state] ?? 'continue',
  };
}

/**
 * Every interrupted session of the workspace: the coordinator's, then flow runs. `cache` spares
 * re-reading finished flow runs (flow-sessions.ts); `rescan` stats every run.yaml even when the
 * listing did not change (a hand edit of a finished run).
 */
export async function findInterruptedSessions(
  workspace: string,
  cache?: FlowStatusCache,
  opts: { rescan?: boolean } = {},
): Promise<InterruptedSession[]> {
  const c = coordinatorSession(workspace);
  return [...(c ? [c] : []), ...(await flowSessions(workspace, cache, opts))];
}

/** The seed's resume prompt for a session. */
export function describeSession(s: InterruptedSession): string {
  // Flow's iron law: a blocked run's reason comes before anything else about it.
  const lines = [
    ...(s.blockedReason === undefined ? [] : [`Blocked: ${s.blockedReason}`]),
    `Found interrupted ${s.kind} session:`,
    `- Session: ${s.session}`,
    `- State: ${s.state}`,
    `- Completed: ${s.completed.join(', ') || 'none'}`,
    `- In Progress: ${s.inProgress.join(', ') || 'none'}`,
  ];
  lines.push(`Next: ${s.nextAction}`);
  lines.push(
    s.runId === undefined
      ? 'Options: [restart] start fresh (clears progress) · [abort] stop and clean up (not written by phasebridge: resume it with the coordinator itself)'
      : 'Options: [resume] continue where it left off · [restart] start fresh (clears progress) · [abort] stop and clean up',
  );
  return lines.join('\n');
}

/** Removes `.coordinator/` (the session state; task branches are left alone). */
export function removeCoordinatorState(workspace: string): void {
  fs.rmSync(coordinatorPaths(workspace).dir, { recursive: true, force: true });
}
