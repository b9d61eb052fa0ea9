/**
 * Crash-safe file replacement: temp file in the same folder, fsync, rename, fsync the folder.
 * Symlinks are never followed: a symlinked target or folder is refused with UnsafePathError (a
 * CorruptStateError), so a planted link cannot redirect our writes outside the workspace.
 *
 * Synchronous on purpose (as better-sqlite3 is): a commit is a handful of short syscalls, and
 * thread-pool hops for each would cost more than the fsyncs themselves on a fast disk.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import {
  confirmFdInside,
  ensureRealDir,
  lstatNoSymlink,
  STATE_FILE_MODE,
  UnsafePathError,
} from './safe-path.ts';

export { ensureRealDir, lstatNoSymlink } from './safe-path.ts';

const { O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW, O_RDONLY, O_DIRECTORY } = fs.constants;

/** Options of {@link writeFileAtomic}. */
export interface AtomicWriteOptions {
  /** File mode of the new file (default 0o600: state files are private to the bridge's user). */
  mode?: number;
  /**
   * A trusted ancestor folder: every folder between it and the file is checked not to be a
   * symlink (default: only the file's own folder is checked).
   */
  root?: string;
  /** Create missing folders (mode 0700) below `root` (or the file's folder) first (default false). */
  mkdirs?: boolean;
}

/** fsyncs a folder so a rename or a new entry in it survives a power loss. */
export function fsyncDir(dir: string): void {
  const fd = fs.openSync(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Replaces `file` with `data` atomically: readers see the old or the new content, never a mix,
 * and after return the new content survives a crash. No temp file is left behind on failure.
 */
export function writeFileAtomic(
  file: string,
  data: string | Uint8Array,
  opts: AtomicWriteOptions = {},
): void {
  const target = path.resolve(file);
  const dir = path.dirname(target);
  const root = opts.root ?? dir;
  ensureRealDir(dir, { root, mkdirs: opts.mkdirs ?? false });
  writeIntoCheckedDir(target, data, opts.mode ?? STATE_FILE_MODE, root);
  fsyncDir(dir);
}

/**
 * The body of {@link writeFileAtomic} for a folder already checked by the caller, without the
 * folder fsync (the caller fsyncs it, e.g. through a folder fd it keeps open). The temp file must
 * turn out to be inside `root` (default: the file's folder) before anything is written to it.
 */
export function writeIntoCheckedDir(
  target: string,
  data: string | Uint8Array,
  mode: number,
  root: string = path.dirname(target),
): void {
  const st = lstatNoSymlink(target);
  if (st !== null && !st.isFile()) {
    throw new UnsafePathError(target, `refusing ${target}: it is not a regular file`);
  }
  const dir = path.dirname(target);
  const tmp = path.join(
    dir,
    `.${path.basename(target)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`,
  );
  // O_EXCL|O_NOFOLLOW: never reuse or follow anything already at the temp path.
  const fd = fs.openSync(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode);
  try {
    try {
      confirmFdInside(fd, root, target);
      fs.writeFileSync(fd, data);
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(tmp, target);
  } catch (err) {
    fs.rmSync(tmp, { force: true });
    throw err;
  }
}
