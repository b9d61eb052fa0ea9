import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import { signalGroup } from './kill-tree.ts';
import type { AgentCommand } from './types.ts';

/** How a started process ended. */
export interface ProcessExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** A started agent process: its pid (= its process group id) and how to await its end. */
export interface SpawnedProcess {
  pid: number;
  child: ChildProcess & {
    stdout: NonNullable<ChildProcess['stdout']>;
    stderr: NonNullable<ChildProcess['stderr']>;
  };
  exit: Promise<ProcessExit>;
}

/** Spawn result: the process, or the errno error that prevented it (ENOENT, EACCES, …). */
export type SpawnResult =
  | { ok: true; process: SpawnedProcess }
  | { ok: false; error: NodeJS.ErrnoException };

/** Where and how an agent process starts. */
export interface SpawnOptions {
  cwd: string;
  env: Record<string, string>;
  /** Lower the process's CPU priority by this much (a `nice` increment; 0 or absent: ours). */
  nice?: number;
}

/** The autogroup a process is in (`/autogroup-123`), or null without autogroups. */
function autogroupOf(pid: number | 'self'): string | null {
  try {
    return fs.readFileSync(`/proc/${pid}/autogroup`, 'utf8').split(' ')[0] ?? null;
  } catch {
    return null;
  }
}

/**
 * Lowers a just-started process's priority by `increment` below ours (capped at 19). Best
 * effort: the agent runs either way. Its threads and children, created later, inherit it.
 * Linux with autogroups (the default on most distributions) shares CPU between sessions
 * first, and a detached agent leads a session of its own: its autogroup is lowered too, or the
 * process nice alone would change nothing against the bridge.
 */
export function lowerPriority(pid: number, increment: number): void {
  if (increment <= 0) return;
  const nice = Math.min(19, os.getPriority() + increment);
  try {
    os.setPriority(pid, nice);
  } catch {
    // Already gone, or not allowed (e.g. a seccomp profile): not a reason to fail the step.
  }
  const group = autogroupOf(pid);
  // Only the agent's own group: never the one it shares with us.
  if (group === null || group === autogroupOf('self')) return;
  try {
    fs.writeFileSync(`/proc/${pid}/autogroup`, String(nice));
  } catch {
    // Gone, or rate-limited for unprivileged users (one change per 100 ms): best effort.
  }
}

/** Process groups of the agents this process started whose leader has not exited yet. */
const liveGroups = new Set<number>();

/**
 * SIGKILLs every agent process group this process started that still runs; returns how many.
 * For a process about to exit without waiting for its steps (a leader that lost its lease): a
 * detached agent would outlive it and run on while another worker takes its step again.
 */
export function killAgentGroups(): number {
  const groups = [...liveGroups];
  for (const pgid of groups) signalGroup(pgid, 'SIGKILL');
  liveGroups.clear();
  return groups.length;
}

/**
 * Starts `cmd` without a shell, as the leader of its own process group (detached) so the whole
 * tree can be signalled, with stdout/stderr piped and the prompt (if any) written to stdin.
 */
export function spawnProcess(cmd: AgentCommand, opts: SpawnOptions): Promise<SpawnResult> {
  let child: ChildProcess;
  try {
    child = spawn(cmd.file, cmd.args, {
      cwd: opts.cwd,
      env: opts.env,
      shell: false,
      detached: true,
      windowsHide: true,
      stdio: [cmd.stdin === null ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    // At once: the agent has just exec'd and has not started its own threads and children yet.
    if (child.pid !== undefined) lowerPriority(child.pid, opts.nice ?? 0);
  } catch (err) {
    // Synchronous failures: bad argument types, NUL bytes in argv.
    return Promise.resolve({ ok: false, error: err as NodeJS.ErrnoException });
  }
  const pgid = child.pid;
  if (pgid !== undefined) liveGroups.add(pgid);
  const exit = new Promise<ProcessExit>((resolve) => {
    child.once('exit', (code, signal) => {
      if (pgid !== undefined) liveGroups.delete(pgid);
      resolve({ code, signal });
    });
  });
  return new Promise<SpawnResult>((resolve) => {
    child.once('error', (error: NodeJS.ErrnoException) => {
      if (child.pid === undefined) resolve({ ok: false, error });
    });
    child.once('spawn', () => {
      if (cmd.stdin !== null && child.stdin) {
        // The agent may exit without reading stdin; EPIPE then is not our failure.
        child.stdin.on('error', () => {});
        child.stdin.end(cmd.stdin);
      }
      resolve({
        ok: true,
        process: { pid: child.pid!, child: child as SpawnedProcess['child'], exit },
      });
    });
  });
}
