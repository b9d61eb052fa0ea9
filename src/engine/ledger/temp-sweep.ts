/**
 * Removes what interrupted atomic writes left in a folder (issue 39): temp files of our own
 * naming (`.<name>.<pid>.<8 hex>.tmp`, see atomic-write.ts) whose writer is gone, and the run
 * lock's temp files (`lock.<token>.tmp`) left by a kill while taking the lock. Entries are
 * lstat'ed, never followed, never read; anything else (a link, a folder, a file named otherwise,
 * a temp file of a live process other than a long-dead one's reused pid) is left alone.
 */
import fs from 'node:fs';
import path from 'node:path';

/** Our temp file names (atomic-write.ts): the target's name, the writer's pid, 4 random bytes in hex. */
export const OWN_TEMP = /^\.(.+)\.(\d{1,10})\.([0-9a-f]{8})\.tmp$/;

/** A temp file this old is a leftover even if its pid is alive again (reused by another process). */
const STALE_MS = 60 * 60 * 1000;

/** The run lock's own temp file (run-lock.ts: `lock.<token>.tmp`, hard-linked into place). */
export const LOCK_TEMP = /^lock\.[0-9a-f]{16}\.tmp$/;

/**
 * A lock temp file this old is a leftover: a process taking the lock removes its own right after
 * one link call, so only a kill between the two leaves one (issue 39's chaos found one). The
 * sweep runs under the lock, so a taker whose temp it removed fails to take it as it would anyway.
 */
export const LOCK_TEMP_STALE_MS = 1000;

/** True when a process with this pid exists (EPERM: it exists but is not ours). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Removes `dir`'s leftover temp files of our naming and returns their names; a folder that
 * cannot be listed gives none. Call with the folder's writers excluded (the run's lock held).
 */
export function sweepOwnTemps(dir: string, now: number = Date.now()): string[] {
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const name of names) {
    const m = OWN_TEMP.exec(name);
    const lockTemp = LOCK_TEMP.test(name);
    if (!m && !lockTemp) continue;
    const pid = Number(m?.[2]);
    if (pid === process.pid) continue; // maybe being written right now
    const file = path.join(dir, name);
    let st: fs.Stats;
    try {
      st = fs.lstatSync(file);
    } catch {
      continue;
    }
    if (!st.isFile()) continue;
    if (lockTemp && now - st.mtimeMs < LOCK_TEMP_STALE_MS) continue;
    if (m && alive(pid) && now - st.mtimeMs < STALE_MS) continue;
    try {
      fs.unlinkSync(file);
      removed.push(name);
    } catch {
      // gone meanwhile, or not ours to remove: left
    }
  }
  return removed;
}
