import { resolve } from 'node:path';
import type { Command } from 'commander';
import type { RunState } from '../../engine/model.ts';
import { isTerminal } from '../../engine/model.ts';
import { InvalidInputError, NotFoundError } from '../../errors.ts';
import {
  describeSession,
  findInterruptedSessions,
  type InterruptedSession,
  removeCoordinatorState,
} from '../../jobs/orchestrator/sessions.ts';
import type { CliContext } from '../context.ts';
import { driveRun, type RunControl } from '../drive.ts';
import { acceptedState, cliKey } from '../orchestrator-context.ts';

const ACTIONS = ['list', 'resume', 'restart', 'abort'] as const;

/**
 * `phasebridge sessions [resume|restart|abort] [--workspace DIR] [--session ID]`: the workspace's
 * interrupted coordinator session (`.coordinator/state.json` not IDLE, ours or the coordinator's
 * own) and flow runs that are active or blocked, with the seed's summary; the actions act on one.
 */
export function registerSessionsCommand(program: Command, ctx: CliContext): void {
  program
    .command('sessions')
    .description(
      'interrupted coordinator sessions and active/blocked flow runs of a workspace: list, resume, restart or abort one',
    )
    .argument('[action]', `${ACTIONS.join(' | ')} (default list)`, 'list')
    .option('--workspace <dir>', 'the workspace', '.')
    .option('--session <id>', 'which session (default: the only one)')
    .option('--detach', 'only record it; `serve` or `worker` runs the jobs')
    .action(
      async (action: string, opts: { workspace: string; session?: string; detach?: boolean }) => {
        if (!(ACTIONS as readonly string[]).includes(action)) {
          throw new InvalidInputError(`unknown action "${action}" (use ${ACTIONS.join(', ')})`);
        }
        const workspace = resolve(opts.workspace);
        const sessions = findInterruptedSessions(workspace);
        if (action === 'list') {
          console.log(
            sessions.length === 0
              ? `no interrupted session in ${workspace}`
              : sessions.map(describeSession).join('\n\n'),
          );
          return;
        }
        const s = pick(sessions, opts.session, workspace);
        console.log(describeSession(s));
        const detach = opts.detach === true;
        if (action === 'abort') return abort(ctx, s, workspace);
        if (action === 'resume') {
          if (s.runId === undefined) {
            throw new InvalidInputError(
              `session ${s.session} was not written by phasebridge: resume it with the coordinator itself, or restart/abort it here`,
            );
          }
          const runId = s.runId;
          await driveRun(ctx, { detach, runId, showBlocked: true }, (o) => resumeRun(o, runId));
          return;
        }
        await restart(ctx, s, workspace, detach);
      },
    );
}

function pick(sessions: InterruptedSession[], id: string | undefined, workspace: string) {
  const found = id === undefined ? sessions : sessions.filter((s) => s.session === id);
  if (found.length === 0) {
    throw new NotFoundError(
      id === undefined
        ? `no interrupted session in ${workspace}`
        : `no interrupted session ${id} in ${workspace}`,
    );
  }
  if (found.length > 1) {
    throw new InvalidInputError(
      `${found.length} interrupted sessions: name one with --session (${found.map((s) => s.session).join(', ')})`,
    );
  }
  return found[0]!;
}

/** Re-enters the state's action: a checkpoint stays shown, blocked retries, paused resumes. */
async function resumeRun(o: RunControl, runId: string): Promise<RunState> {
  const state = await o.getRun(runId);
  if (isTerminal(state.status)) {
    throw new InvalidInputError(`run ${runId} is ${state.status}: restart or abort the session`);
  }
  // Awaiting: the checkpoint is shown again. Active: opening the orchestrator reconciled its
  // jobs (lost ones queued again, finished ones applied), and driving it continues them.
  if (state.status === 'awaiting' || state.status === 'active') return state;
  const kind = state.blocked?.kind;
  const type =
    state.status === 'blocked' && kind !== 'paused' && kind !== 'interrupted' ? 'retry' : 'resume';
  return acceptedState(await o.command(runId, cliKey(), { type, actor: { id: 'cli:sessions' } }));
}

async function cancelIfOurs(ctx: CliContext, s: InterruptedSession): Promise<RunState | null> {
  const runId = s.runId;
  if (runId === undefined) return null;
  let ended: RunState | null = null;
  await driveRun(ctx, { detach: true, runId, cancelWanted: true }, async (o) => {
    const state = await o.getRun(runId);
    ended = state;
    if (isTerminal(state.status)) return state;
    ended = acceptedState(
      await o.command(runId, cliKey(), {
        type: 'cancel',
        actor: { id: ctx.actor },
        reason: 'session aborted',
      }),
    );
    return ended;
  });
  return ended;
}

async function abort(ctx: CliContext, s: InterruptedSession, workspace: string): Promise<void> {
  await cancelIfOurs(ctx, s);
  if (s.kind === 'coordinator') removeCoordinatorState(workspace);
  console.log(
    `session ${s.session} aborted${s.kind === 'coordinator' ? ': .coordinator/ removed (task branches left alone)' : ''}`,
  );
}

async function restart(ctx: CliContext, s: InterruptedSession, workspace: string, detach: boolean) {
  const old: RunState | null = await cancelIfOurs(ctx, s);
  if (s.kind === 'coordinator') removeCoordinatorState(workspace);
  if (old === null) {
    console.log(
      `session ${s.session} cleared: start again with \`phasebridge run coordinator --spec …\``,
    );
    return;
  }
  const previous: RunState = old;
  await driveRun(ctx, { detach }, (o) =>
    o.startRun({
      workflow: previous.workflow.id,
      workspace,
      spec: previous.spec,
      actor: { id: ctx.actor },
      key: cliKey(),
      layout: previous.layout,
      ...(previous.selectedTrack === undefined ? {} : { track: previous.selectedTrack }),
    }),
  );
}
