/**
 * Run folders that never became runs (issue 39): a process killed between creating a run's
 * folder and its first ledger line leaves a folder with no ledger line. That is not a run, so
 * it is neither listed nor kept: once older than a grace period (a start in progress takes
 * milliseconds) and holding nothing but what we put there first (an empty ledger, a lock whose
 * holder is gone, our own temp files, the layouts' marker, an empty logs folder), it is removed. Entries are
 * lstat'ed, never followed; a folder with anything else in it (foreign content) is left alone.
 */
import fs from 'node:fs';
import path from 'node:path';
import { NATIVE_FILES } from '../layouts/native.ts';
import { RunLock } from '../ledger/run-lock.ts';
import { LOCK_TEMP, OWN_TEMP } from '../ledger/temp-sweep.ts';
import { isLayoutMarker } from './layout-marker.ts';
import { isValidRunId } from './run-id.ts';

/** A folder with no ledger line younger than this may be a start in progress: left. */
export const NEVER_STARTED_GRACE_MS = 10 * 60 * 1000;

/** True when the run folder `dir` has no ledger line (no ledger, or an empty one). */
export function hasNoLedgerLine(dir: string): boolean {
  const st = fs.lstatSync(path.join(dir, NATIVE_FILES.ledger), { throwIfNoEntry: false });
  return st === undefined || (st.isFile() && st.size === 0);
}

/**
 * Whether every entry of `dir` is one of ours and inert; `newest` gets the latest mtime seen
 * (the folder's own included). Null when something else is there (or it cannot be read).
 */
function ownLeftovers(dir: string): { names: string[]; newest: number } | null {
  let names: string[];
  let newest: number;
  try {
    newest = fs.lstatSync(dir).mtimeMs;
    names = fs.readdirSync(dir);
  } catch {
    return null;
  }
  for (const name of names) {
    const st = fs.lstatSync(path.join(dir, name), { throwIfNoEntry: false });
    if (st === undefined) continue;
    newest = Math.max(newest, st.mtimeMs);
    if (name === NATIVE_FILES.logs) {
      if (!st.isDirectory() || fs.readdirSync(path.join(dir, name)).length > 0) return null;
      continue;
    }
    if (!st.isFile()) return null; // a link, a folder: not ours
    if (name === NATIVE_FILES.ledger ? st.size > 0 : !ours(name)) return null;
  }
  return { names, newest };
}

const ours = (name: string): boolean =>
  name === NATIVE_FILES.lock || OWN_TEMP.test(name) || LOCK_TEMP.test(name) || isLayoutMarker(name);

/**
 * Removes the never-started run folders under `runsDir` older than `graceMs` (except those
 * `skip` names: runs open in this process) and returns their ids. Each is removed under its run
 * lock (a live holder keeps it); a folder that gains an entry meanwhile is left (rmdir fails).
 */
export function sweepNeverStarted(
  runsDir: string,
  opts: { now?: number; graceMs?: number; skip?: (runId: string) => boolean } = {},
): string[] {
  const now = opts.now ?? Date.now();
  const grace = opts.graceMs ?? NEVER_STARTED_GRACE_MS;
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(runsDir, { withFileTypes: true });
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const d of entries) {
    // A Dirent of a symlink is not a directory: links are never followed.
    if (!d.isDirectory() || !isValidRunId(d.name) || opts.skip?.(d.name)) continue;
    const dir = path.join(runsDir, d.name);
    if (!hasNoLedgerLine(dir)) continue;
    const found = ownLeftovers(dir);
    if (found === null || now - found.newest < grace) continue;
    let lock: RunLock;
    try {
      lock = RunLock.acquire(path.join(dir, NATIVE_FILES.lock), d.name);
    } catch {
      continue; // held by a live process (or not ours to lock): left
    }
    try {
      // Looked at again under the lock: nothing of a run's may have appeared meanwhile.
      const now2 = ownLeftovers(dir);
      if (now2 === null || !hasNoLedgerLine(dir)) continue;
      for (const name of now2.names) {
        if (name === NATIVE_FILES.lock) continue;
        const file = path.join(dir, name);
        if (name === NATIVE_FILES.logs) fs.rmdirSync(file);
        else fs.unlinkSync(file);
      }
    } catch {
      continue;
    } finally {
      lock.release();
    }
    try {
      fs.rmdirSync(dir);
      removed.push(d.name);
    } catch {
      // something appeared after the lock was released: left
    }
  }
  return removed;
}
