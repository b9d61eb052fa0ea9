/**
 * Whether a process is alive, for tests that wait for one to end. A killed process that nobody
 * reaped yet is a zombie, and `kill(pid, 0)` still succeeds on it: a daemonized redis-server or an
 * agent's grandchild is reparented to init or to a subreaper (`scripts/cpu-of.py`, a container's
 * init), which may reap it late. Waiting on `kill(pid, 0)` alone then timed out on a quiet run.
 */
import fs from 'node:fs';

/** True while `pid` runs: not gone, not a zombie (EPERM: another user's process, alive). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
    return state !== 'Z' && state !== 'X';
  } catch (err) {
    // No /proc (macOS): kill(pid, 0) succeeding is all we know; gone between the two calls: dead.
    return (err as NodeJS.ErrnoException).code !== 'ENOENT' && process.platform !== 'linux';
  }
}
