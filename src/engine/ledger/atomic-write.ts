/**
 * Crash-safe file replacement: temp file in the same folder, fsync, rename, fsync the folder.
 * Symlinks are never followed: a symlinked target or folder is refused with UnsafePathError (a
 * CorruptStateError), so a planted link cannot redirect our writes outside the workspace.
 *
 * Two forms: `writeFileAtomic` (synchronous, as better-sqlite3 is: a handful of short syscalls
 * where no other work waits) and `writeFileAtomicAsync`, whose fsyncs and rename run on libuv's
 * thread pool, so that on a busy bridge one run's disk wait does not stall every other run's
 * commits, job pick-ups and agent spawns (a loaded disk takes tens of ms per fsync). Both return
 * only once the new content is durable. `durable: false` (scratch files an agent reads, written
 * again before each use) skips the fsyncs and keeps the atomic rename.
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
  /**
   * false: no fsync (the file is still replaced atomically). Only for scratch files rewritten
   * before every use, whose loss in a power cut costs nothing (default true).
   */
  durable?: boolean;
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

/** fsync on the thread pool: resolves once the file's data and size are on disk. */
export function fsyncAsync(fd: number): Promise<void> {
  return new Promise((resolve, reject) => {
    fs.fsync(fd, (err) => (err ? reject(err) : resolve()));
  });
}

/**
 * The thread-pool calls below, through node's callback API looked up at call time (tests trace
 * durability through `fs`; fs/promises would bypass them).
 */
const pool = {
  open: (file: string, flags: number, mode?: number) =>
    new Promise<number>((resolve, reject) =>
      fs.open(file, flags, mode, (err, fd) => (err ? reject(err) : resolve(fd))),
    ),
  write: (fd: number, data: Uint8Array, offset: number) =>
    new Promise<number>((resolve, reject) =>
      fs.write(fd, data, offset, data.length - offset, null, (err, n) =>
        err ? reject(err) : resolve(n),
      ),
    ),
  close: (fd: number) =>
    new Promise<void>((resolve, reject) => fs.close(fd, (err) => (err ? reject(err) : resolve()))),
  rename: (from: string, to: string) =>
    new Promise<void>((resolve, reject) =>
      fs.rename(from, to, (err) => (err ? reject(err) : resolve())),
    ),
  rm: (file: string) =>
    new Promise<void>((resolve) => fs.rm(file, { force: true }, () => resolve())),
};

/** {@link fsyncDir} on the thread pool (the open and close too). */
export async function fsyncDirAsync(dir: string): Promise<void> {
  const fd = await pool.open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
  try {
    await fsyncAsync(fd);
  } finally {
    await pool.close(fd);
  }
}

/**
 * Replaces `file` with `data` atomically: readers see the old or the new content, never a mix,
 * and after return the new content survives a crash (unless `durable: false`). No temp file is
 * left behind on failure.
 */
export function writeFileAtomic(
  file: string,
  data: string | Uint8Array,
  opts: AtomicWriteOptions = {},
): void {
  const { target, dir, root } = checked(file, opts);
  const durable = opts.durable ?? true;
  const { fd, tmp } = openTemp(target, opts.mode ?? STATE_FILE_MODE, root);
  try {
    try {
      fs.writeFileSync(fd, data);
      if (durable) fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(tmp, target);
  } catch (err) {
    fs.rmSync(tmp, { force: true });
    throw err;
  }
  if (durable) fsyncDir(dir);
}

/**
 * {@link writeFileAtomic} with every call that creates, writes, syncs or renames on the thread
 * pool: on a loaded disk even creating the temp file waits for the journal (milliseconds), and
 * the bridge's thread must not wait with it. Durable on resolve.
 */
export async function writeFileAtomicAsync(
  file: string,
  data: string | Uint8Array,
  opts: AtomicWriteOptions = {},
): Promise<void> {
  const { target, dir, root } = checked(file, opts);
  const durable = opts.durable ?? true;
  const tmp = tempPath(target);
  // O_EXCL|O_NOFOLLOW: never reuse or follow anything already at the temp path.
  const mode = opts.mode ?? STATE_FILE_MODE;
  const fd = await pool.open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode);
  try {
    try {
      confirmFdInside(fd, root, target);
      const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
      for (let off = 0; off < bytes.length; ) off += await pool.write(fd, bytes, off);
      if (durable) await fsyncAsync(fd);
    } finally {
      await pool.close(fd);
    }
    await pool.rename(tmp, target);
  } catch (err) {
    await pool.rm(tmp);
    throw err;
  }
  if (durable) await fsyncDirAsync(dir);
}

/** A new file content written and fsynced beside its target, not yet in place. */
export interface StagedWrite {
  /** The target's folder (the one to fsync after {@link StagedWrite.rename}). */
  readonly dir: string;
  /** The target (absolute). */
  readonly file: string;
  /** Renames it over the target and fsyncs the folder (`dirFd` when given, kept open by the caller). */
  publish(dirFd?: number): Promise<void>;
  /** Renames it over the target only: the caller fsyncs {@link StagedWrite.dir} (with others). */
  rename(): Promise<void>;
  /** Removes the temp file (the target is left as it was). */
  discard(): Promise<void>;
}

/**
 * The first half of {@link writeFileAtomicAsync}: the temp file is created, written and fsynced
 * (on the thread pool), the target untouched until `publish()`. A commit stages its state file
 * while its ledger line is being fsynced, and publishes once the line is durable: the two fsyncs
 * overlap, and the state file is never ahead of the ledger.
 */
export async function stageFileAtomicAsync(
  file: string,
  data: string | Uint8Array,
  opts: Omit<AtomicWriteOptions, 'durable'> = {},
): Promise<StagedWrite> {
  const { target, dir, root } = checked(file, opts);
  const tmp = tempPath(target);
  const fd = await pool.open(
    tmp,
    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW,
    opts.mode ?? STATE_FILE_MODE,
  );
  try {
    try {
      confirmFdInside(fd, root, target);
      const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
      for (let off = 0; off < bytes.length; ) off += await pool.write(fd, bytes, off);
      await fsyncAsync(fd);
    } finally {
      await pool.close(fd);
    }
  } catch (err) {
    await pool.rm(tmp);
    throw err;
  }
  return stagedWrite(
    dir,
    target,
    () => pool.rename(tmp, target),
    () => pool.rm(tmp),
  );
}

/**
 * {@link stageFileAtomicAsync} with the temp file created and written on the calling thread
 * (short calls, as {@link writeFileAtomic} makes them) and only its fsync on the thread pool:
 * one round trip instead of four, for a commit that stages several files while its ledger line
 * is fsynced. `rename()` renames on the calling thread too (no fsync: the caller fsyncs `dir`).
 * `durable: false`: no fsync at all (the caller makes the file durable later, or rebuilds it).
 */
export async function stageFileAtomicFast(
  file: string,
  data: string | Uint8Array,
  opts: AtomicWriteOptions = {},
): Promise<StagedWrite> {
  const { target, dir, root } = checked(file, opts);
  const { fd, tmp } = openTemp(target, opts.mode ?? STATE_FILE_MODE, root);
  try {
    try {
      fs.writeFileSync(fd, data);
      if (opts.durable ?? true) {
        // A turn later: a commit staging its files writes its ledger line meanwhile, so the two
        // fsyncs start with both files written (one journal commit for both, not one each).
        await Promise.resolve();
        await fsyncAsync(fd);
      }
    } finally {
      fs.closeSync(fd);
    }
  } catch (err) {
    fs.rmSync(tmp, { force: true });
    throw err;
  }
  return stagedWrite(
    dir,
    target,
    async () => fs.renameSync(tmp, target),
    async () => fs.rmSync(tmp, { force: true }),
  );
}

/**
 * A staged temp file of `dir`: `rename` moves it into place (removing it when that fails),
 * `publish` renames and fsyncs the folder, `discard` removes it.
 */
function stagedWrite(
  dir: string,
  file: string,
  move: () => Promise<void>,
  remove: () => Promise<void>,
): StagedWrite {
  const rename = async () => {
    try {
      await move();
    } catch (err) {
      await remove();
      throw err;
    }
  };
  return {
    dir,
    file,
    rename,
    publish: async (dirFd) => {
      await rename();
      if (dirFd === undefined) await fsyncDirAsync(dir);
      else await fsyncAsync(dirFd);
    },
    discard: remove,
  };
}

/** {@link fsyncDir} with only the fsync on the thread pool (the open and close are short). */
export async function fsyncDirFast(dir: string): Promise<void> {
  const fd = fs.openSync(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
  try {
    await fsyncAsync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

function checked(file: string, opts: AtomicWriteOptions) {
  const target = path.resolve(file);
  const dir = path.dirname(target);
  const root = opts.root ?? dir;
  ensureRealDir(dir, { root, mkdirs: opts.mkdirs ?? false });
  return { target, dir, root };
}

/** A fresh temp path beside `target` (refusing a target that is not a regular file). */
function tempPath(target: string): string {
  const st = lstatNoSymlink(target);
  if (st !== null && !st.isFile()) {
    throw new UnsafePathError(target, `refusing ${target}: it is not a regular file`);
  }
  return path.join(
    path.dirname(target),
    `.${path.basename(target)}.${process.pid}.${tempTag()}.tmp`,
  );
}

/** This process's temp tags start at a random point (a reused pid finds no name of its own). */
let nextTag = randomBytes(4).readUInt32BE(0);

/**
 * The next 8-hex tag of a temp file: a counter, not 4 random bytes per file (the random source
 * was a measurable part of a commit's CPU); O_EXCL still refuses any name already there.
 */
function tempTag(): string {
  nextTag = (nextTag + 1) >>> 0;
  return nextTag.toString(16).padStart(8, '0');
}

/** Opens a fresh temp file beside `target` (refusing a target that is not a regular file). */
function openTemp(target: string, mode: number, root: string): { fd: number; tmp: string } {
  const tmp = tempPath(target);
  // O_EXCL|O_NOFOLLOW: never reuse or follow anything already at the temp path.
  const fd = fs.openSync(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode);
  try {
    confirmFdInside(fd, root, target);
  } catch (err) {
    fs.closeSync(fd);
    fs.rmSync(tmp, { force: true });
    throw err;
  }
  return { fd, tmp };
}
