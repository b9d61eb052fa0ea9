/**
 * Resume / restart / abort of an interrupted session (sessions.ts finds them): the one code path
 * the CLI (`phasebridge sessions`) and the chat offer (Resume / Restart / Abort buttons) share.
 * Each takes the calls it needs from whoever drives runs (the local Orchestrator, the running
 * bridge over its control socket, or chatops' orchestrator) and idempotency keys derived from the
 * caller's one key, so a repeated press or command commits nothing twice.
 */
import type { Actor, RunState } from '../../engine/model.ts';
import { isTerminal } from '../../engine/model.ts';
import type { CommitResult } from '../../engine/store/types.ts';
import { InvalidInputError } from '../../errors.ts';
import { committed } from './committed.ts';
import { type InterruptedSession, removeCoordinatorState } from './sessions.ts';
import type { CommandInput, StartRunInput } from './types.ts';

export { committed };

/** What acting on a session needs from the orchestrator. */
export interface SessionControl {
  getRun(runId: string): Promise<RunState>;
  command(runId: string, key: string, command: CommandInput): Promise<CommitResult>;
  startRun(input: StartRunInput): Promise<RunState>;
}

/** Who acts, under which idempotency key, and (chat) where a restarted run comes from. */
export interface SessionActor {
  actor: Actor;
  key: string;
  originChat?: string;
}

/** The three choices of the seed's resume prompt. */
export const SESSION_ACTIONS = ['resume', 'restart', 'abort'] as const;
/** One of them. */
export type SessionAction = (typeof SESSION_ACTIONS)[number];

/**
 * Re-enters the state's action (seed 004's table): an open checkpoint (PLANNING) stays and is
 * shown again; a blocked run retries its step (a tasks step only its unfinished tasks); a paused
 * or interrupted one resumes; an active one whose step job was held by a dead process gets it
 * back at once (resumeInterrupted), and its finished tasks are never run again.
 */
export async function resumeSession(
  o: SessionControl,
  s: InterruptedSession,
  by: SessionActor,
): Promise<RunState> {
  const runId = s.runId;
  if (runId === undefined) {
    throw new InvalidInputError(
      `session ${s.session} was not written by phasebridge: resume it with the coordinator itself, or restart/abort it here`,
    );
  }
  const state = await o.getRun(runId);
  if (isTerminal(state.status)) {
    throw new InvalidInputError(`run ${runId} is ${state.status}: restart or abort the session`);
  }
  if (state.status === 'awaiting') return state;
  const actor = by.actor;
  if (state.status === 'active') {
    const result = await o.command(runId, `${by.key}:resume`, { type: 'resume', actor });
    // Refused: no step job of its own is in flight (a tasks step, whose lost task jobs start-up
    // already handed back): the run goes on by itself.
    return result.ok ? result.state : o.getRun(runId);
  }
  const kind = state.blocked?.kind;
  const type = kind !== 'paused' && kind !== 'interrupted' ? 'retry' : 'resume';
  return committed(await o.command(runId, `${by.key}:${type}`, { type, actor }));
}

/** Cancels the session's phasebridge run (if any, and not ended); its state after, or null. */
export async function cancelSessionRun(
  o: SessionControl,
  s: InterruptedSession,
  by: SessionActor,
): Promise<RunState | null> {
  if (s.runId === undefined) return null;
  const state = await o.getRun(s.runId);
  if (isTerminal(state.status)) return state;
  return committed(
    await o.command(s.runId, `${by.key}:cancel`, {
      type: 'cancel',
      actor: by.actor,
      reason: 'session aborted',
    }),
  );
}

/**
 * Abort: cancels our run and removes `.coordinator/` (the session state), nothing else: task
 * branches and a flow run's files stay. Returns the cancelled run, or null when it had none.
 */
export async function abortSession(
  o: SessionControl | null,
  s: InterruptedSession,
  workspace: string,
  by: SessionActor,
): Promise<RunState | null> {
  const ended = o === null ? null : await cancelSessionRun(o, s, by);
  if (s.kind === 'coordinator') removeCoordinatorState(workspace);
  return ended;
}

/**
 * Restart: cancels our run, clears `.coordinator/`, and starts the same workflow with the same
 * spec, layout and track. A session the coordinator wrote itself is only cleared (null).
 */
export async function restartSession(
  o: SessionControl | null,
  s: InterruptedSession,
  workspace: string,
  by: SessionActor,
): Promise<RunState | null> {
  const old = o === null ? null : await cancelSessionRun(o, s, by);
  if (s.kind === 'coordinator') removeCoordinatorState(workspace);
  if (o === null || old === null) return null;
  return o.startRun({
    workflow: old.workflow.id,
    workspace,
    spec: old.spec,
    actor: by.actor,
    key: `${by.key}:restart`,
    layout: old.layout,
    ...(old.selectedTrack === undefined ? {} : { track: old.selectedTrack }),
    ...(by.originChat === undefined ? {} : { originChat: by.originChat }),
  });
}

/** What an abort or restart did, in words (CLI output and the chat's private answer). */
export function actionWords(action: SessionAction, s: InterruptedSession, run: RunState | null) {
  const cleared =
    s.kind === 'coordinator' ? ': .coordinator/ removed (task branches left alone)' : '';
  if (action === 'abort') return `session ${s.session} aborted${cleared}`;
  if (action === 'restart') {
    return run === null
      ? `session ${s.session} cleared: start again with \`phasebridge run coordinator --spec …\``
      : `session ${s.session} restarted as run ${run.id}`;
  }
  return run === null
    ? `session ${s.session} resumed`
    : `session ${s.session} resumed: run ${run.id} is ${run.status}`;
}
