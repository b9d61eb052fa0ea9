import type { Readable } from 'node:stream';
import { groupIsAlive, terminateGroup } from './kill-tree.ts';
import type { ProcessExit, SpawnedProcess } from './spawn.ts';

/** How long to wait for the output pipes to close once the process group is gone. */
const DRAIN_MS = 1000;

/** What supervision needs: limits, cancel, and where output and our own log lines go. */
export interface SuperviseOptions {
  timeoutMs: number;
  killGraceMs: number;
  signal?: AbortSignal;
  /** Aborted (reason: why, one line) when the agent must stop for our sake, e.g. a full disk. */
  fault?: AbortSignal;
  onStdout(chunk: Buffer): void;
  onStderr(chunk: Buffer): void;
  log(line: string): void;
}

/** How supervision ended. */
export interface SupervisedEnd {
  exit: ProcessExit;
  timedOut: boolean;
  cancelled: boolean;
  /** The fault's reason when `fault` stopped the agent. */
  fault?: string;
}

/** `30s`, `1.5s`, `300ms`: how a limit is shown to people. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${ms}ms`;
  return ms % 1000 === 0 ? `${ms / 1000}s` : `${(ms / 1000).toFixed(1)}s`;
}

function closed(stream: Readable): Promise<void> {
  return new Promise((resolve) => {
    if (stream.closed) resolve();
    else stream.once('close', () => resolve());
  });
}

/** Resolves true if `p` settles within `ms`, else false; never leaves a timer behind. */
function within(p: Promise<unknown>, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    void p.then(() => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

/**
 * Watches a spawned agent until it and its whole process group are gone: streams its output,
 * enforces the timeout and cancel (SIGTERM to the group, SIGKILL after the grace period), and
 * terminates processes the agent left behind in its group after it exited.
 */
export async function supervise(
  proc: SpawnedProcess,
  opts: SuperviseOptions,
): Promise<SupervisedEnd> {
  const { pid, child } = proc;
  let timedOut = false;
  let cancelled = false;
  let fault: string | undefined;
  let termination: Promise<void> | null = null;

  const terminate = (why: string): void => {
    opts.log(`[phasebridge] ${new Date().toISOString()} ${why}: SIGTERM to process group ${pid}`);
    termination = terminateGroup(pid, opts.killGraceMs).then((ender) => {
      if (ender === 'SIGKILL') {
        opts.log(
          `[phasebridge] still running after ${formatDuration(opts.killGraceMs)}: SIGKILL sent`,
        );
      }
    });
  };
  const stop = (reason: 'timeout' | 'cancel' | 'fault'): void => {
    if (termination !== null) return;
    if (reason === 'timeout') timedOut = true;
    else if (reason === 'cancel') cancelled = true;
    else fault = String(opts.fault?.reason ?? 'fault');
    terminate(
      reason === 'timeout'
        ? `timed out after ${formatDuration(opts.timeoutMs)}`
        : reason === 'cancel'
          ? 'cancelled'
          : (fault ?? 'fault'),
    );
  };

  child.stdout.on('data', opts.onStdout);
  child.stderr.on('data', opts.onStderr);
  const drained = Promise.all([closed(child.stdout), closed(child.stderr)]);

  const limited = Number.isFinite(opts.timeoutMs) && opts.timeoutMs > 0;
  const timer = limited ? setTimeout(() => stop('timeout'), opts.timeoutMs) : null;
  const onAbort = (): void => stop('cancel');
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  if (opts.signal?.aborted) onAbort();
  // Output keeps being read (and dropped) after a fault, so the agent never blocks on its pipe.
  const onFault = (): void => stop('fault');
  opts.fault?.addEventListener('abort', onFault, { once: true });
  if (opts.fault?.aborted) onFault();

  const exit = await proc.exit;
  if (timer !== null) clearTimeout(timer);
  opts.signal?.removeEventListener('abort', onAbort);
  opts.fault?.removeEventListener('abort', onFault);

  if (termination === null && groupIsAlive(pid))
    terminate('agent exited leaving processes in its group');
  await termination;
  // A process that left the group (setsid) may still hold the pipes; do not wait for it forever.
  if (!(await within(drained, DRAIN_MS))) {
    child.stdout.destroy();
    child.stderr.destroy();
  }
  return { exit, timedOut, cancelled, ...(fault !== undefined ? { fault } : {}) };
}
