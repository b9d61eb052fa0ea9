/**
 * A lock file giving one process the right to write a run. It holds `{pid, start, token}`; a lock
 * whose process is gone (or whose pid now belongs to another process) is taken over, a live one is
 * refused with ConflictError "run X is locked by pid N".
 *
 * The file appears atomically with its content (written to a temp file, then hard-linked into
 * place: link fails with EEXIST), so nobody ever reads a half-written lock.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { ConflictError } from '../../errors.ts';

/** What a lock file says about its holder. */
export interface LockOwner {
  pid: number;
  /** Process start time in clock ticks since boot (Linux /proc), null elsewhere. */
  start: number | null;
  /** Random per-acquisition token, so a release never removes someone else's lock. */
  token: string;
  /** When the lock was taken (ISO). */
  at: string;
}

/** How long a takeover guard may live before it is itself considered stale. */
const GUARD_STALE_MS = 10_000;

/** Reads `/proc/<pid>/stat`: start time and whether the process is a zombie. Null when absent. */
function procStat(pid: number): { start: number; zombie: boolean } | null | 'unsupported' {
  let text: string;
  try {
    text = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
      return fs.existsSync('/proc/self/stat') ? null : 'unsupported';
    }
    return 'unsupported';
  }
  // The command name may hold spaces and parens: fields start after the last ')'.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const state = fields[0] ?? '';
  return { start: Number(fields[19]), zombie: state === 'Z' || state === 'X' };
}

/** This process's identity, read once: its start time never changes (issue 31's profile). */
let ownIdentity: { pid: number; start: number | null } | undefined;

/**
 * The identity this process writes into its locks. Read from /proc once per process: flow's
 * commits take a lock per file written, and reading /proc/self/stat each time was the larger
 * part of their CPU.
 */
export function currentLockIdentity(): { pid: number; start: number | null } {
  if (ownIdentity === undefined || ownIdentity.pid !== process.pid) {
    const stat = procStat(process.pid);
    ownIdentity = {
      pid: process.pid,
      start: typeof stat === 'object' && stat ? stat.start : null,
    };
  }
  return { ...ownIdentity };
}

/** True when the lock's holder still runs (same pid AND same start time where knowable). */
export function isOwnerAlive(owner: LockOwner): boolean {
  const stat = procStat(owner.pid);
  if (stat === null) return false;
  if (stat !== 'unsupported') {
    if (stat.zombie) return false;
    return owner.start === null || stat.start === owner.start;
  }
  try {
    process.kill(owner.pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Reads a lock file: its owner, null when missing, 'garbage' when unreadable. */
export function readLockOwner(file: string): LockOwner | null | 'garbage' {
  let text: string;
  try {
    const fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
    try {
      text = fs.readFileSync(fd, 'utf8');
    } finally {
      fs.closeSync(fd);
    }
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return null;
    if (code === 'ELOOP') return 'garbage'; // a planted symlink is never a valid lock
    throw err;
  }
  try {
    const o = JSON.parse(text) as Partial<LockOwner>;
    if (typeof o.pid === 'number' && typeof o.token === 'string') {
      return { pid: o.pid, start: o.start ?? null, token: o.token, at: String(o.at ?? '') };
    }
  } catch {
    // fall through: an unparseable lock cannot name a live holder
  }
  return 'garbage';
}

/** A held lock file; call {@link RunLock.release} when done with the run. */
export class RunLock {
  /** The lock file's path. */
  readonly file: string;
  /** What this lock wrote into the file. */
  readonly owner: LockOwner;
  #released = false;

  private constructor(file: string, owner: LockOwner) {
    this.file = file;
    this.owner = owner;
  }

  /**
   * Takes the lock at `file` for this process; `label` names the run in the error.
   * Throws ConflictError when a live process (this one included) holds it.
   */
  static acquire(file: string, label: string): RunLock {
    const owner: LockOwner = {
      ...currentLockIdentity(),
      token: randomBytes(8).toString('hex'),
      at: new Date().toISOString(),
    };
    for (let attempt = 0; attempt < 5; attempt++) {
      if (tryCreate(file, owner)) return new RunLock(file, owner);
      const current = readLockOwner(file);
      if (current === null) continue; // released meanwhile: try again
      if (current !== 'garbage' && isOwnerAlive(current)) {
        const who = current.pid === process.pid ? ' (this process)' : '';
        throw new ConflictError(`run ${label} is locked by pid ${current.pid}${who}`);
      }
      removeStale(file, current, label);
    }
    throw new ConflictError(`run ${label}: could not take its lock (contended)`);
  }

  /** Removes the lock file if it is still ours; idempotent. */
  release(): void {
    if (this.#released) return;
    this.#released = true;
    const current = readLockOwner(this.file);
    if (current !== null && current !== 'garbage' && current.token === this.owner.token) {
      fs.rmSync(this.file, { force: true });
    }
  }
}

/** Creates the lock atomically with its content; false when a lock file already exists. */
function tryCreate(file: string, owner: LockOwner): boolean {
  const tmp = `${file}.${owner.token}.tmp`;
  fs.writeFileSync(tmp, JSON.stringify(owner), { mode: 0o600, flag: 'wx' });
  try {
    fs.linkSync(tmp, file);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  } finally {
    fs.rmSync(tmp, { force: true });
  }
}

/**
 * Deletes a stale lock under a takeover guard, re-checking under the guard that it is still the
 * same stale lock, so two processes taking over at once cannot delete each other's fresh lock.
 */
function removeStale(file: string, seen: LockOwner | 'garbage', label: string): void {
  const guard = `${file}.takeover`;
  try {
    fs.writeFileSync(guard, String(process.pid), { mode: 0o600, flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    const age = Date.now() - (fs.statSync(guard, { throwIfNoEntry: false })?.mtimeMs ?? 0);
    if (age > GUARD_STALE_MS) {
      fs.rmSync(guard, { force: true });
      return;
    }
    throw new ConflictError(`run ${label}: another process is taking over its stale lock`);
  }
  try {
    const now = readLockOwner(file);
    const same =
      now === 'garbage'
        ? seen === 'garbage'
        : now !== null && seen !== 'garbage' && now.token === seen.token;
    if (same) fs.rmSync(file, { force: true });
  } finally {
    fs.rmSync(guard, { force: true });
  }
}
