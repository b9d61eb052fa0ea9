/**
 * Workspaces are untrusted: an agent, or a cloned repository, may plant a symlink, a hard link or
 * a FIFO anywhere in one. Every file the bridge opens inside a workspace goes through here:
 * - the path must stay inside the root (the workspace, or another trusted folder);
 * - every folder between the root and the file is lstat'ed and a symlink is refused;
 * - the file itself is opened with O_NOFOLLOW and must be a regular file with a single link;
 * - on Linux the kernel's path of the opened file (/proc/self/fd) must still lie inside the
 *   root, which catches a folder swapped for a link between the checks and the open.
 * A refusal is an {@link UnsafePathError}, a CorruptStateError naming the path, so the caller
 * fails only the run that path belongs to. Folders are created 0700 and files 0600.
 */
import fs from 'node:fs';
import path from 'node:path';
import { CorruptStateError } from '../../errors.ts';

const { O_NOFOLLOW, O_NONBLOCK, O_CREAT, O_EXCL, O_RDONLY, O_RDWR, O_WRONLY } = fs.constants;

/** Mode of every file the bridge writes under a workspace's state folders. */
export const STATE_FILE_MODE = 0o600;
/** Mode of every folder the bridge creates under a workspace. */
export const STATE_DIR_MODE = 0o700;

/** A path inside a workspace the bridge refuses to use: a planted link, an escape, an odd file. */
export class UnsafePathError extends CorruptStateError {
  /** The refused path (absolute). */
  readonly path: string;
  constructor(refused: string, message: string) {
    super(message);
    this.path = refused;
  }
}

function plantedLink(p: string): UnsafePathError {
  return new UnsafePathError(p, `refusing to follow the symlink ${p} planted in the workspace`);
}

/** An ENOENT error shaped like the one fs.openSync throws, for a missing folder on the way. */
function enoent(p: string): NodeJS.ErrnoException {
  const err: NodeJS.ErrnoException = new Error(`ENOENT: no such file or directory, open '${p}'`);
  err.code = 'ENOENT';
  err.path = p;
  return err;
}

/** True when `p` is `root` or lies below it (compared as resolved paths, no file access). */
export function isInside(root: string, p: string): boolean {
  const rel = path.relative(path.resolve(root), path.resolve(p));
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
}

/** `p` (absolute, or relative to `root`) made absolute; UnsafePathError when it leaves `root`. */
export function resolveInside(root: string, p: string): string {
  const abs = path.resolve(root, p);
  if (!isInside(root, abs)) {
    throw new UnsafePathError(abs, `refusing ${abs}: it is outside ${path.resolve(root)}`);
  }
  return abs;
}

/** Throws UnsafePathError when `p` exists and is a symlink; returns its stats (or null). */
export function lstatNoSymlink(p: string): fs.Stats | null {
  let st: fs.Stats;
  try {
    st = fs.lstatSync(p);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    // ENOTDIR: a file sits where a folder was expected; the walk reports that on its own.
    if (code === 'ENOENT' || code === 'ENOTDIR') return null;
    throw err;
  }
  if (st.isSymbolicLink()) throw plantedLink(p);
  return st;
}

/**
 * Walks from `root` (exclusive) down to `dir`: each folder must be a real folder; missing ones are
 * created (mode `mode`) when `mkdirs`. Returns the first missing folder, or null when all exist.
 */
function walkDirs(root: string, dir: string, mkdirs: boolean, mode: number): string | null {
  const base = path.resolve(root);
  const target = resolveInside(base, dir);
  const rel = path.relative(base, target);
  let current = base;
  for (const part of rel === '' ? [] : rel.split(path.sep)) {
    current = path.join(current, part);
    let st = lstatNoSymlink(current);
    if (st === null) {
      if (!mkdirs) return current;
      try {
        fs.mkdirSync(current, { mode });
      } catch (err) {
        // Another process may create it at the same moment; check what is there now.
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
        st = lstatNoSymlink(current);
      }
    }
    if (st !== null && !st.isDirectory()) {
      throw new UnsafePathError(current, `refusing ${current}: it is not a folder`);
    }
  }
  if (rel === '') {
    const st = lstatNoSymlink(target);
    if (st === null) return target;
    if (!st.isDirectory()) throw new UnsafePathError(target, `refusing ${target}: not a folder`);
  }
  return null;
}

/** Options of {@link ensureRealDir}. */
export interface RealDirOptions {
  /** The trusted folder the walk starts below (default: the folder's parent). */
  root?: string;
  /** Create missing folders (default false: a missing one is a CorruptStateError). */
  mkdirs?: boolean;
  /** Mode of created folders (default 0700). */
  mode?: number;
}

/**
 * Checks that `dir` and every folder between `root` (exclusive) and `dir` are real folders,
 * creating missing ones when `mkdirs`. Throws UnsafePathError on a symlink or a non-folder.
 */
export function ensureRealDir(dir: string, opts: RealDirOptions = {}): void {
  const root = opts.root ?? path.dirname(path.resolve(dir));
  const missing = walkDirs(root, dir, opts.mkdirs ?? false, opts.mode ?? STATE_DIR_MODE);
  if (missing !== null) throw new CorruptStateError(`folder ${missing} does not exist`);
}

/** Creates (0700) or checks every folder from `root` down to `dir`; returns `dir` absolute. */
export function ensureDirInside(root: string, dir: string): string {
  const abs = resolveInside(root, dir);
  ensureRealDir(abs, { root, mkdirs: true });
  return abs;
}

/**
 * On Linux, refuses an open file whose real path (as the kernel names it) is outside `root`: a
 * folder on the way was swapped for a link after it was checked. Elsewhere there is no /proc and
 * the lstat walk is all we have.
 */
export function confirmFdInside(fd: number, root: string, shown: string): void {
  let real: string;
  try {
    real = fs.readlinkSync(`/proc/self/fd/${fd}`);
  } catch {
    return;
  }
  // The kernel's path has no links: when it is under `root` as written, `root` names that very
  // folder and the file is inside; otherwise `root` may itself be reached through a link.
  if (!isInside(root, real) && !isInside(fs.realpathSync.native(root), real)) {
    throw new UnsafePathError(shown, `refusing ${shown}: it leads outside the workspace`);
  }
}

/** Checks an fd just opened: a regular file with one link, inside `root`; tightens its mode. */
function checkOpened(fd: number, root: string, abs: string, flags: number, mode: number): void {
  const st = fs.fstatSync(fd);
  if (!st.isFile()) throw new UnsafePathError(abs, `refusing ${abs}: it is not a regular file`);
  // A hard link is a link too: appending to one would write into a file elsewhere.
  if (st.nlink > 1) {
    throw new UnsafePathError(abs, `refusing ${abs}: it has ${st.nlink} hard links`);
  }
  confirmFdInside(fd, root, abs);
  const writing = (flags & (O_WRONLY | O_RDWR)) !== 0;
  if (writing && (st.mode & 0o777 & ~mode) !== 0) {
    try {
      fs.fchmodSync(fd, mode);
    } catch {
      // Not our file (another user's): its mode is theirs to choose.
    }
  }
}

/**
 * Opens `file` (absolute, or relative to `root`) inside `root` without following a symlink on
 * the way. With O_CREAT missing folders are created (0700) and a new file gets `mode` (an
 * existing one opened for writing is tightened to it); without O_CREAT a missing file or folder
 * throws ENOENT as fs.openSync does. Returns the fd; the caller closes it.
 */
export function openInside(
  root: string,
  file: string,
  flags: number,
  mode: number = STATE_FILE_MODE,
): number {
  const abs = resolveInside(root, file);
  if (walkDirs(root, path.dirname(abs), (flags & O_CREAT) !== 0, STATE_DIR_MODE) !== null) {
    throw enoent(abs);
  }
  const st = lstatNoSymlink(abs);
  if (st !== null && !st.isFile()) {
    throw new UnsafePathError(abs, `refusing ${abs}: it is not a regular file`);
  }
  let fd: number;
  try {
    // O_NONBLOCK: a FIFO planted after the lstat must not hang the open (it is refused below).
    fd = fs.openSync(abs, flags | O_NOFOLLOW | O_NONBLOCK, mode);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ELOOP') throw plantedLink(abs);
    throw err;
  }
  try {
    checkOpened(fd, root, abs, flags, mode);
  } catch (err) {
    fs.closeSync(fd);
    throw err;
  }
  return fd;
}

/**
 * Size limits of the files phasebridge reads (documented in docs/refusals.md#hostile-files-and-input-bounds): a file over
 * its limit is refused, never read whole. A ledger is read line by line, each at most a line's
 * limit.
 */
export const READ_LIMITS = {
  /** A state file in a workspace (run.json, directive.json, sessions, state.json, run.yaml…). */
  state: 16 * 1024 * 1024,
  /** The spec given with --spec-file. */
  spec: 1024 * 1024,
  /** phasebridge.config.yaml. */
  config: 1024 * 1024,
  /** A workflow file or a prompt file. */
  workflow: 1024 * 1024,
  /** One line of a ledger. */
  ledgerLine: 1024 * 1024,
} as const;

/** `n` bytes as a short figure ("1 MB", "512 KB", "12 bytes"). */
export function sizeText(n: number): string {
  if (n >= 1024 * 1024 && n % (1024 * 1024) === 0) return `${n / (1024 * 1024)} MB`;
  if (n >= 1024 * 1024) return `${(n / (1024 * 1024)).toFixed(1)} MB`;
  if (n >= 1024) return `${Math.round(n / 1024)} KB`;
  return `${n} bytes`;
}

/** A file refused before reading: `refusing <p>: it is N, over the L limit`. */
export function overLimit(p: string, size: number, limit: number): UnsafePathError {
  return new UnsafePathError(
    p,
    `refusing ${p}: it is ${sizeText(size)}, over the ${sizeText(limit)} limit for this kind of file`,
  );
}

/**
 * Reads at most `limit` bytes from an fd already checked to be a regular file; a file longer
 * than `limit` (by fstat, or found growing) is refused as {@link overLimit}.
 */
export function readFdBounded(fd: number, limit: number, shown: string): Buffer {
  const size = fs.fstatSync(fd).size;
  if (size > limit) throw overLimit(shown, size, limit);
  const buf = Buffer.alloc(Math.min(limit + 1, Math.max(size, 0) + 1));
  let off = 0;
  for (;;) {
    const n = fs.readSync(fd, buf, off, buf.length - off, off);
    if (n === 0) break;
    off += n;
    if (off === buf.length) {
      if (off > limit) throw overLimit(shown, off, limit);
      // It grew while being read: go on up to the limit.
      return Buffer.concat([buf, readRest(fd, off, limit, shown)]);
    }
  }
  return buf.subarray(0, off);
}

function readRest(fd: number, from: number, limit: number, shown: string): Buffer {
  const buf = Buffer.alloc(limit + 1 - from);
  let off = 0;
  while (off < buf.length) {
    const n = fs.readSync(fd, buf, off, buf.length - off, from + off);
    if (n === 0) return buf.subarray(0, off);
    off += n;
  }
  throw overLimit(shown, from + off, limit);
}

/** Options of {@link readRegularFile}. */
export interface RegularReadOptions {
  /** Most bytes read; a longer file is refused. */
  limit: number;
  /** Refuse a file with more than one hard link (a file phasebridge also writes). */
  singleLink?: boolean;
  /** Follow a symlink to the file (a path the user named explicitly); default false. */
  followLink?: boolean;
}

/**
 * Reads a file the user named (a spec, the config): opened O_NONBLOCK (a FIFO cannot hang the
 * open), fstat'ed, refused unless a regular file within `limit`. null when it does not exist.
 */
export function readRegularFile(file: string, opts: RegularReadOptions): Buffer | null {
  const abs = path.resolve(file);
  const noFollow = opts.followLink === true ? 0 : O_NOFOLLOW;
  let fd: number;
  try {
    fd = fs.openSync(abs, O_RDONLY | O_NONBLOCK | noFollow);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return null;
    if (code === 'ELOOP') throw new UnsafePathError(abs, `refusing ${abs}: it is a symlink`);
    throw err;
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) throw new UnsafePathError(abs, `refusing ${abs}: it is not a regular file`);
    if (opts.singleLink === true && st.nlink > 1) {
      throw new UnsafePathError(abs, `refusing ${abs}: it has ${st.nlink} hard links`);
    }
    return readFdBounded(fd, opts.limit, abs);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * The bytes of `file` inside `root` (at most `limit`, default {@link READ_LIMITS}.state), or null
 * when it (or a folder on its way) does not exist.
 */
export function readFileInside(
  root: string,
  file: string,
  limit: number = READ_LIMITS.state,
): Buffer | null {
  let fd: number;
  try {
    fd = openInside(root, file, O_RDONLY);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  try {
    return readFdBounded(fd, limit, resolveInside(root, file));
  } finally {
    fs.closeSync(fd);
  }
}

/** The UTF-8 text of `file` inside `root` (at most `limit` bytes), or null when it does not exist. */
export function readTextInside(
  root: string,
  file: string,
  limit: number = READ_LIMITS.state,
): string | null {
  return readFileInside(root, file, limit)?.toString('utf8') ?? null;
}

/** Refuses `p` when it exists and is a symlink, not a regular file, or a hard link. */
function checkPlainFile(p: string): void {
  const st = lstatNoSymlink(p);
  if (st === null) return;
  if (!st.isFile()) throw new UnsafePathError(p, `refusing ${p}: it is not a regular file`);
  if (st.nlink > 1) throw new UnsafePathError(p, `refusing ${p}: it has ${st.nlink} hard links`);
}

/**
 * Makes a SQLite database inside `root` safe to open by path (SQLite itself follows symlinks):
 * its folders, the file and its -wal, -shm and -journal companions must be real files with one
 * link. A missing database is created empty with mode 0600, which SQLite copies to its
 * companions. Returns the absolute path to open. Existing files are only lstat'ed, never opened:
 * closing an fd drops every POSIX lock this process holds on the file, SQLite's included.
 */
export function prepareSqliteInside(root: string, dbFile: string): string {
  const abs = resolveInside(root, dbFile);
  ensureRealDir(path.dirname(abs), { root, mkdirs: true });
  for (const suffix of ['', '-wal', '-shm', '-journal']) checkPlainFile(`${abs}${suffix}`);
  try {
    fs.closeSync(fs.openSync(abs, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, STATE_FILE_MODE));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  return abs;
}
