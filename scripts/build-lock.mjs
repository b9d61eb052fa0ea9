/**
 * dist/.build-lock: concurrent builds (parallel CLI calls, test workers) wait for the one that
 * holds it; a lock its holder left behind (killed, Ctrl-C) is taken over.
 */
import { readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';

/** A lock older than this is left over by a build that died; it is taken over. */
const LOCK_STALE_MS = 120_000;

/** Whether the build lock's holder is gone: its pid no longer runs, or the lock is too old. */
function lockAbandoned(file) {
  let pid;
  let since;
  try {
    pid = Number(readFileSync(file, 'utf8'));
    since = statSync(file).mtimeMs;
  } catch {
    return false; // released meanwhile: the next attempt takes it
  }
  if (Date.now() - since > LOCK_STALE_MS) return true;
  if (!pid) return false; // its holder is writing its pid
  try {
    process.kill(pid, 0);
    return false;
  } catch (err) {
    return err.code === 'ESRCH';
  }
}

/** Takes dist/.build-lock (a file holding our pid), waiting while a live process holds it. */
export async function takeLock(file) {
  for (;;) {
    try {
      writeFileSync(file, String(process.pid), { flag: 'wx' });
      return () => rmSync(file, { force: true });
    } catch (err) {
      if (err.code !== 'EEXIST') throw err;
    }
    // A build stopped by Ctrl-C leaves its lock behind: the next call takes it over.
    if (lockAbandoned(file)) rmSync(file, { force: true });
    else await new Promise((r) => setTimeout(r, 50));
  }
}
