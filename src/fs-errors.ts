/**
 * Node's system errors (file system, sockets) and SQLite's storage errors, turned into phasebridge
 * errors whose one-line message names the path (or port) and the fix. The CLI's top-level handler
 * and the places that know which file failed (bridge.db, a step log, a run's folder) all map
 * through here, so "no space left" reads the same wherever it happens.
 */
import fs from 'node:fs';
import path from 'node:path';
import { sqliteCode } from './db/sqlite-code.ts';
import { CorruptStateError, PhasebridgeError, ResourceError } from './errors.ts';

/** A Node system error: an errno `code` ('ENOSPC'), usually a `syscall` and a `path`. */
export type SystemError = NodeJS.ErrnoException & {
  address?: string;
  port?: number;
  hostname?: string;
};

/** `err` as a Node system error (errno code such as 'ENOSPC'), else undefined. */
export function systemError(err: unknown): SystemError | undefined {
  if (!(err instanceof Error)) return undefined;
  const code = (err as SystemError).code;
  // Node's own ERR_* codes are programming errors, not the machine refusing something.
  return typeof code === 'string' && /^E[A-Z0-9]+$/.test(code) ? (err as SystemError) : undefined;
}

/** Records `where` on a system error that names no path (write and fsync errors carry none). */
export function withPath<T>(err: T, where: string): T {
  const sys = systemError(err);
  if (sys && sys.path === undefined) sys.path = where;
  return err;
}

/** Hints for errors that do not say which file they concern. */
export interface ErrorHints {
  /** Path of bridge.db: SQLite's errors never name their file. */
  readonly dbFile?: string;
}

/**
 * Maps a system error or a SQLite storage error to a phasebridge error; a phasebridge error or
 * anything else is returned unchanged.
 */
export function explainError(err: unknown, hints: ErrorHints = {}): unknown {
  if (err instanceof PhasebridgeError) return err;
  const sys = systemError(err);
  if (sys) return resourceErrorOf(sys);
  if (hints.dbFile !== undefined) return sqliteStorageError(err, hints.dbFile) ?? err;
  return err;
}

/** The ResourceError for a system error; `where` is used when the error names no path. */
export function resourceErrorOf(err: unknown, where?: string): ResourceError | undefined {
  const sys = systemError(err);
  if (!sys) return undefined;
  const text = sys.syscall === 'listen' ? listenProblem(sys) : fileProblem(sys, where);
  return new ResourceError(text, { cause: err });
}

/** `where` is a file (or something else) where a folder is needed. */
export function notAFolder(where: string, cause?: unknown): ResourceError {
  return new ResourceError(
    `${where} is a file, not a folder: move it aside or choose another path`,
    cause === undefined ? undefined : { cause },
  );
}

const DESCRIPTIONS: Record<string, string> = {
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EROFS: 'read-only file system',
  EIO: 'input/output error',
  ELOOP: 'too many symbolic links',
  ENAMETOOLONG: 'name too long',
  ENOENT: 'no such file or folder',
  EBUSY: 'resource busy',
};

function fileProblem(sys: SystemError, where: string | undefined): string {
  const p = sys.path ?? where;
  const on = p === undefined ? 'the device' : p;
  switch (sys.code) {
    case 'ENOSPC':
      return `no space left on ${on}: free some space, then retry`;
    case 'EDQUOT':
      return `disk quota exceeded on ${on}: free some space or raise the quota, then retry`;
    case 'EACCES':
    case 'EPERM':
      return `${DESCRIPTIONS[sys.code]} on ${on}: let the user running phasebridge read and write it (chown/chmod), or choose another path`;
    case 'ENOTDIR':
      return `${on}: part of this path is a file, not a folder: move that file aside or choose another path`;
    case 'EISDIR':
      return `${on} is a folder where a file is expected: move the folder aside`;
    case 'EEXIST':
      return sys.syscall === 'mkdir' ? notAFolder(on).message : `${on} already exists`;
    case 'EROFS':
      return `${on} is on a read-only file system: choose a writable path`;
    case 'ENOENT':
      return `${on} does not exist: create it or correct the path`;
    case 'EMFILE':
    case 'ENFILE':
      return `too many open files (at ${on}): raise the limit (ulimit -n) and restart phasebridge`;
    case 'ECONNREFUSED':
      return `cannot connect to ${sys.address ?? '?'}:${sys.port ?? '?'} (connection refused): start that service or correct its URL`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `cannot resolve the host name ${sys.hostname ?? on}: check the name (PHASEBRIDGE_HOST, REDIS_URL or an API URL) and the DNS`;
    default: {
      const what = DESCRIPTIONS[sys.code ?? ''] ?? sys.code ?? 'system error';
      const op = sys.syscall ? `${sys.syscall} ` : '';
      return `${op}${on} failed (${what}${what === sys.code ? '' : `, ${sys.code}`}): check the path and the disk`;
    }
  }
}

function listenProblem(sys: SystemError): string {
  const host = sys.address ?? 'its address';
  const port = sys.port ?? '?';
  switch (sys.code) {
    case 'EADDRINUSE':
      return `port ${port} on ${host} is in use: stop the other process or set PHASEBRIDGE_PORT`;
    case 'EADDRNOTAVAIL':
      return `address ${host} is not on this machine: set PHASEBRIDGE_HOST to one of its addresses (127.0.0.1 for this machine only)`;
    case 'EACCES':
    case 'EPERM':
      return `port ${port} on ${host} needs privileges: set PHASEBRIDGE_PORT to 1024 or above`;
    default:
      return `cannot listen on ${host}:${port} (${sys.code}): check PHASEBRIDGE_HOST and PHASEBRIDGE_PORT`;
  }
}

/**
 * bridge.db's storage failures (damaged file, full disk, read-only, unopenable) as phasebridge
 * errors naming the file; undefined for any other error (constraints are `mapSqliteError`'s).
 */
export function sqliteStorageError(err: unknown, file: string): PhasebridgeError | undefined {
  const code = sqliteCode(err);
  if (code === undefined) return undefined;
  const detail = (err as Error).message;
  const cause = { cause: err };
  if (code === 'SQLITE_NOTADB' || code.startsWith('SQLITE_CORRUPT')) {
    return new CorruptStateError(
      `${file} is not a usable bridge.db (${detail}): move it aside to start an empty one (bindings, allowlists and agents are then lost), or restore it from a backup`,
      cause,
    );
  }
  if (code === 'SQLITE_FULL') {
    return new ResourceError(`no space left on ${file}: free some space, then retry`, cause);
  }
  if (code.startsWith('SQLITE_READONLY')) {
    return new ResourceError(
      `${file} is read-only (${detail}): let the user running phasebridge write it and its folder`,
      cause,
    );
  }
  if (code.startsWith('SQLITE_CANTOPEN') || code.startsWith('SQLITE_PERM')) {
    return new ResourceError(
      `cannot open ${file} (${detail}): check that its folder exists and this user may write it`,
      cause,
    );
  }
  if (code.startsWith('SQLITE_IOERR')) {
    return new ResourceError(
      `disk I/O error on ${file} (${code}): check the disk and its free space, then retry`,
      cause,
    );
  }
  return undefined;
}

function isDirectory(p: string): boolean {
  try {
    return fs.statSync(p).isDirectory();
  } catch {
    return false;
  }
}

/**
 * `mkdir -p` that cannot hang: Node's recursive mkdir retries forever where mkdir answers ENOENT
 * under an existing parent (e.g. `/proc/self/x`). Returns the first folder it created, if any;
 * throws ResourceError naming the path and the fix. `mode` applies to created folders (umask too).
 */
export function makeDirs(dir: string, mode = 0o777): string | undefined {
  const missing: string[] = [];
  let current = path.resolve(dir);
  for (;;) {
    let st: fs.Stats | undefined;
    try {
      st = fs.statSync(current);
    } catch (err) {
      const code = systemError(err)?.code;
      // ENOTDIR: an ancestor is a file; walking up finds it and names it.
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw resourceErrorOf(err, current);
    }
    if (st !== undefined) {
      if (!st.isDirectory()) throw notAFolder(current);
      break;
    }
    missing.unshift(current);
    const parent = path.dirname(current);
    if (parent === current) break;
    current = parent;
  }
  for (const d of missing) {
    try {
      fs.mkdirSync(d, { mode });
    } catch (err) {
      const code = systemError(err)?.code;
      if (code === 'EEXIST' && isDirectory(d)) continue; // another process was faster
      if (code === 'ENOENT') {
        throw new ResourceError(
          `cannot create folder ${d}: ${path.dirname(d)} does not accept new folders: choose another path`,
          { cause: err },
        );
      }
      throw resourceErrorOf(err, d) ?? err;
    }
  }
  return missing[0];
}
