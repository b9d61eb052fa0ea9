import { resolve } from 'node:path';
import type { Command } from 'commander';
import type { RunState } from '../../engine/model.ts';
import { InvalidInputError, NotFoundError } from '../../errors.ts';
import type { SessionAction, SessionControl } from '../../jobs/orchestrator/session-actions.ts';
import type { InterruptedSession } from '../../jobs/orchestrator/sessions.ts';
import type { CliContext } from '../context.ts';
import { driveRun } from '../drive.ts';
import { cliKey } from '../orchestrator-context.ts';

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
    .option(
      '--rescan',
      "read every flow run's run.yaml again (to see a hand edit of a finished run at once)",
    )
    .action(
      async (
        action: string,
        opts: { workspace: string; session?: string; detach?: boolean; rescan?: boolean },
      ) => {
        if (!(ACTIONS as readonly string[]).includes(action)) {
          throw new InvalidInputError(`unknown action "${action}" (use ${ACTIONS.join(', ')})`);
        }
        const workspace = resolve(opts.workspace);
        // Loaded here: the engine (yaml, zod) is not needed for `--help` or other commands.
        const { describeSession, findInterruptedSessions } = await import(
          '../../jobs/orchestrator/sessions.ts'
        );
        const { abortSession, actionWords, restartSession, resumeSession } = await import(
          '../../jobs/orchestrator/session-actions.ts'
        );
        // bridge.db remembers finished flow runs: their run.yaml files are not read again.
        const sessions = await findInterruptedSessions(
          workspace,
          (await ctx.repos()).flowRunCache,
          {
            rescan: opts.rescan === true,
          },
        );
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
        const by = { actor: { id: ctx.actor }, key: cliKey() };
        if (action === 'resume') {
          if (s.runId === undefined) await resumeSession(NO_RUNS, s, by); // says why not
          const runId = s.runId;
          await driveRun(ctx, { detach, runId, showBlocked: true }, (o) => resumeSession(o, s, by));
          return;
        }
        const act = action === 'abort' ? abortSession : restartSession;
        let done: RunState | null = null;
        if (action === 'abort' || s.runId === undefined) {
          // Abort (and restart of a session with no run of ours) drives nothing on.
          if (s.runId === undefined) done = await act(null, s, workspace, by);
          else {
            await driveRun(ctx, { detach: true, runId: s.runId, cancelWanted: true }, async (o) => {
              done = await act(o, s, workspace, by);
              return done ?? o.getRun(s.runId!);
            });
          }
          console.log(actionWords(action as SessionAction, s, done));
          return;
        }
        await driveRun(ctx, { detach }, async (o) => {
          const started = await restartSession(o, s, workspace, by);
          if (started === null) throw new InvalidInputError(`session ${s.session} has no run`);
          return started;
        });
      },
    );
}

/** Control for a session without a run of ours: nothing may be asked of it. */
const NO_RUNS: SessionControl = {
  getRun: (id) => Promise.reject(new NotFoundError(`no run ${id}`)),
  command: (id) => Promise.reject(new NotFoundError(`no run ${id}`)),
  startRun: () => Promise.reject(new InvalidInputError('no run to restart')),
};

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
