/**
 * Drives a run in the CLI process: commit a command, then let the in-process worker run jobs
 * until the run waits for a human, is blocked or ends, showing live progress meanwhile; then
 * print where it stands and the next command to type, and set the exit code.
 */
import type { RunState } from '../engine/model.ts';
import type { Orchestrator } from '../jobs/orchestrator/orchestrator.ts';
import type { CliContext } from './context.ts';
import { withOrchestrator } from './orchestrator-context.ts';
import { findRunRecord } from './read-run.ts';
import { LiveProgress } from './render/live-progress.ts';
import { describeStanding } from './render/standing.ts';

/** Options of driveRun. */
export interface DriveOptions {
  /** Only commit and enqueue; `serve` or `worker` processes run the jobs. */
  detach: boolean;
  /** The command cancels the run, so ending cancelled is success. */
  cancelWanted?: boolean;
  /** The run the command is about: checked in the runs index before anything opens. */
  runId?: string;
  /** Jobs run at once by the in-process worker (default 2, so another run's job cannot starve ours). */
  concurrency?: number;
}

/** Exit code when the user stopped following a run with Ctrl-C (128 + SIGINT). */
export const INTERRUPTED_EXIT_CODE = 130;

/**
 * Runs `act` (which commits and returns the run's state), drives the run until idle unless
 * detached, prints the standing and sets `process.exitCode` (0 awaiting/completed, 1 otherwise).
 */
export async function driveRun(
  ctx: CliContext,
  opts: DriveOptions,
  act: (orchestrator: Orchestrator) => Promise<RunState>,
): Promise<void> {
  if (opts.runId !== undefined) await findRunRecord(ctx, opts.runId);
  const worker = opts.detach ? false : { concurrency: opts.concurrency ?? 2 };
  await withOrchestrator(ctx, { worker }, async ({ orchestrator }) => {
    const live = new LiveProgress(process.stdout, {
      tty: !opts.detach && process.stdout.isTTY === true,
    });
    const offUpdate = orchestrator.onUpdate((u) => live.update(u));
    const offProgress = orchestrator.onProgress((p) => live.progress(p));
    let final: RunState | 'interrupted';
    let runId = '';
    try {
      const first = await act(orchestrator);
      runId = first.id;
      if (opts.detach) {
        final = first;
      } else {
        live.follow(first.id, first);
        final = await idleOrInterrupted(orchestrator, first.id);
      }
    } finally {
      offUpdate();
      offProgress();
      live.stop();
    }
    if (final === 'interrupted') {
      // Closing lets a running step finish (its agent is in its own process group, untouched).
      console.log(
        `stopping: a running step of run ${runId} finishes first (Ctrl-C again quits now); then see \`phasebridge status ${runId}\``,
      );
      process.exitCode = INTERRUPTED_EXIT_CODE;
      return;
    }
    const standing = describeStanding(final, { cancelWanted: opts.cancelWanted === true });
    for (const line of standing.lines) console.log(line);
    process.exitCode = standing.exitCode;
  });
}

/** The run once idle, or 'interrupted' on the first Ctrl-C / SIGTERM (a second one kills). */
async function idleOrInterrupted(
  orchestrator: Orchestrator,
  runId: string,
): Promise<RunState | 'interrupted'> {
  let onSignal = (): void => {};
  const interrupted = new Promise<'interrupted'>((resolve) => {
    onSignal = () => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      resolve('interrupted');
    };
  });
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    return await Promise.race([orchestrator.waitUntilIdle(runId), interrupted]);
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
