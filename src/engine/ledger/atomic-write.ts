/**
 * Crash-safe file replacement: temp file in the same folder, fsync, rename, fsync the folder.
 * Symlinks are never followed: a symlinked target or folder is refused with CorruptStateError,
 * so a planted link cannot redirect our writes outside the workspace.
 *
 * Synchronous on purpose (as better-sqlite3 is): a commit is a handful of short syscalls, and
 * thread-pool hops for each would cost more than the fsyncs themselves on a fast disk.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { CorruptStateError } from '../../errors.ts';

const { O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW, O_RDONLY, O_DIRECTORY } = fs.constants;

/** Options of {@link writeFileAtomic}. */
export interface AtomicWriteOptions {
  /** File mode of the new file (default 0o644, so other tools run by the same team can read it). */
  mode?: number;
  /**
   * A trusted ancestor folder: every folder between it and the file is checked not to be a
   * symlink (default: only the file's own folder is checked).
   */
  root?: string;
  /** Create missing folders below `root` (or the file's folder) first (default false). */
  mkdirs?: boolean;
}

/** Throws CorruptStateError when `p` exists and is a symlink; returns its stats (or null). */
export function lstatNoSymlink(p: string): fs.Stats | null {
  let st: fs.Stats;
  try {
    st = fs.lstatSync(p);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  if (st.isSymbolicLink()) throw new CorruptStateError(`refusing to follow symlink ${p}`);
  return st;
}

/**
 * Checks that `dir` and every folder between `root` (exclusive) and `dir` are real folders,
 * creating missing ones when `mkdirs`. Throws CorruptStateError on a symlink or a non-folder.
 */
export function ensureRealDir(dir: string, opts: { root?: string; mkdirs?: boolean } = {}): void {
  const target = path.resolve(dir);
  const root = opts.root === undefined ? path.dirname(target) : path.resolve(opts.root);
  const rel = path.relative(root, target);
  if (rel === '..' || rel.startsWith(`..${path.sep}`) || path.isAbsolute(rel)) {
    throw new CorruptStateError(`${target} is outside ${root}`);
  }
  let current = root;
  for (const part of rel === '' ? [] : rel.split(path.sep)) {
    current = path.join(current, part);
    let st = lstatNoSymlink(current);
    if (st === null) {
      if (!opts.mkdirs) throw new CorruptStateError(`folder ${current} does not exist`);
      try {
        fs.mkdirSync(current, { mode: 0o755 });
      } catch (err) {
        // Another process may create it at the same moment; check what is there now.
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
        st = lstatNoSymlink(current);
      }
    }
    if (st !== null && !st.isDirectory()) {
      throw new CorruptStateError(`${current} is not a folder`);
    }
  }
  if (rel === '') {
    const st = lstatNoSymlink(target);
    if (st === null || !st.isDirectory()) throw new CorruptStateError(`${target} is not a folder`);
  }
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
  ensureRealDir(dir, { root: opts.root ?? dir, mkdirs: opts.mkdirs ?? false });
  writeIntoCheckedDir(target, data, opts.mode ?? 0o644);
  fsyncDir(dir);
}

/**
 * The body of {@link writeFileAtomic} for a folder already checked by the caller, without the
 * folder fsync (the caller fsyncs it, e.g. through a folder fd it keeps open).
 */
export function writeIntoCheckedDir(target: string, data: string | Uint8Array, mode: number): void {
  const st = lstatNoSymlink(target);
  if (st !== null && !st.isFile()) throw new CorruptStateError(`${target} is not a regular file`);
  const dir = path.dirname(target);
  const tmp = path.join(
    dir,
    `.${path.basename(target)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`,
  );
  // O_EXCL|O_NOFOLLOW: never reuse or follow anything already at the temp path.
  const fd = fs.openSync(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode);
  try {
    try {
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
