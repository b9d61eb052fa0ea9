/**
 * Drives a run from the CLI: commit a command, then follow the run until it waits for a human,
 * is blocked or ends, showing live progress meanwhile; then print where it stands and the next
 * command to type, and set the exit code. When a bridge runs on this PHASEBRIDGE_HOME the
 * command goes to it over the control socket and the bridge drives the run (its chats see every
 * change); alone, the CLI drives it with an in-process worker.
 */
import { layoutModule } from '../engine/layouts/index.ts';
import type { RunState } from '../engine/model.ts';
import type { CommitResult } from '../engine/store/types.ts';
import type {
  CommandInput,
  RunUpdate,
  StartRunInput,
  StepProgress,
} from '../jobs/orchestrator/index.ts';
import type { CliContext } from './context.ts';
import { withOrchestrator } from './orchestrator-context.ts';
import { readRun } from './read-run.ts';
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
  /** resume/retry: a blocked flow run's reason is printed before it is continued (flow's iron law). */
  showBlocked?: boolean;
}

/** What a CLI command drives a run through: the local Orchestrator or the running bridge. */
export interface RunControl {
  startRun(input: StartRunInput): Promise<RunState>;
  command(runId: string, key: string, command: CommandInput): Promise<CommitResult>;
  onUpdate(listener: (u: RunUpdate) => void): () => void;
  onProgress(listener: (p: StepProgress) => void): () => void;
  waitUntilIdle(runId: string): Promise<RunState>;
  getRun(runId: string): Promise<RunState>;
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
  act: (control: RunControl) => Promise<RunState>,
): Promise<void> {
  // Read before anything opens: opening the orchestrator applies a pending template.json edit.
  const before = opts.runId === undefined ? null : (await readRun(ctx, opts.runId)).state;
  const shown = before !== null && layoutModule(before.layout)?.words?.blockedReasonOnResume;
  if (opts.showBlocked && before?.status === 'blocked' && shown === true) {
    console.log(`run ${before.id} was blocked: ${before.blocked?.reason ?? 'no reason recorded'}`);
  }
  const { RemoteRuns } = await import('../control/client.ts');
  const remote = await RemoteRuns.connect((await ctx.config()).home);
  if (remote !== null) {
    try {
      if (!opts.detach) await remote.follow();
      await follow(remote, opts, act, true, before);
    } finally {
      remote.close();
    }
    return;
  }
  const worker = opts.detach ? false : { concurrency: opts.concurrency ?? 2 };
  await withOrchestrator(ctx, { worker }, ({ orchestrator }) =>
    follow(orchestrator, opts, act, false, before),
  );
}

/** Acts, follows the run until idle (unless detached) and prints where it stands. */
async function follow(
  orchestrator: RunControl,
  opts: DriveOptions,
  act: (control: RunControl) => Promise<RunState>,
  remote: boolean,
  before: RunState | null,
): Promise<void> {
  const live = new LiveProgress(process.stdout, {
    tty: !opts.detach && process.stdout.isTTY === true,
  });
  const offUpdate = orchestrator.onUpdate((u) => live.update(u));
  const offProgress = orchestrator.onProgress((p) => live.progress(p));
  let final: RunState | 'interrupted';
  let runId = '';
  let refusal: unknown;
  try {
    let first: RunState;
    try {
      first = await act(orchestrator);
    } catch (err) {
      // A refused command may still have moved the run (a hand edit of template.json applied
      // first): follow it rather than leave a queued step with nobody driving it.
      const now = opts.runId === undefined ? null : await stateOf(orchestrator, opts.runId);
      const moved = now?.status === 'active' && before !== null && now.seq !== before.seq;
      if (!moved || opts.detach) throw err;
      refusal = err;
      first = now;
    }
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
      remote
        ? `stopped following run ${runId}; the bridge drives it on (\`phasebridge status ${runId}\`)`
        : `stopping: a running step of run ${runId} finishes first (Ctrl-C again quits now); then see \`phasebridge status ${runId}\``,
    );
    process.exitCode = INTERRUPTED_EXIT_CODE;
    return;
  }
  const standing = describeStanding(final, { cancelWanted: opts.cancelWanted === true });
  for (const line of standing.lines) console.log(line);
  process.exitCode = standing.exitCode;
  if (refusal !== undefined) throw refusal;
}

/** The run's state, or null when it cannot be read (the command says why). */
async function stateOf(control: RunControl, runId: string): Promise<RunState | null> {
  try {
    return await control.getRun(runId);
  } catch {
    return null;
  }
}

/** The run once idle, or 'interrupted' on the first Ctrl-C / SIGTERM (a second one kills). */
async function idleOrInterrupted(
  orchestrator: RunControl,
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
