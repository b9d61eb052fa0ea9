/**
 * Observes the file-system calls that make state durable (node's own `fs` object, spied and
 * passed through unchanged): writes, fsyncs and renames, synchronous ones when they return and
 * the thread-pool ones (`fs.write`, `fs.fsync`, `fs.rename` with a callback) when they COMPLETE, which is
 * the moment their effect is on disk. Each call names its file (through the fd it was opened as).
 */
import fs from 'node:fs';
import path from 'node:path';
import { vi } from 'vitest';

/** One observed call: what it did and to which file (a mark: the test's own label). */
export interface Traced {
  readonly op: 'write' | 'fsync' | 'rename' | 'mark' | 'create';
  readonly file: string;
}

/**
 * Starts tracing; `restore` puts node's functions back. `mark` records a moment of the test's.
 * `creates`: also records each synchronous open with O_CREAT (op `create`, when it returns).
 */
export function traceFs(opts: { creates?: boolean } = {}): {
  calls: Traced[];
  mark(label: string): void;
  restore: () => void;
} {
  const calls: Traced[] = [];
  const fdPath = new Map<number, string>();
  const open = fs.openSync;
  const write = fs.writeSync;
  const fsync = fs.fsyncSync;
  const rename = fs.renameSync;
  const fsyncCb = fs.fsync;
  const openCb = fs.open;
  const writeCb = fs.write;
  const renameCb = fs.rename;
  const fileOf = (fd: number) => fdPath.get(fd) ?? `fd:${fd}`;
  const spies = [
    vi.spyOn(fs, 'openSync').mockImplementation(((p: fs.PathLike, ...rest: unknown[]) => {
      const fd = (open as (...a: unknown[]) => number)(p, ...rest);
      fdPath.set(fd, path.resolve(String(p)));
      const flags = rest[0];
      if (opts.creates && typeof flags === 'number' && (flags & fs.constants.O_CREAT) !== 0) {
        calls.push({ op: 'create', file: path.resolve(String(p)) });
      }
      return fd;
    }) as typeof fs.openSync),
    vi.spyOn(fs, 'open').mockImplementation(((p: fs.PathLike, ...rest: unknown[]) => {
      const cb = rest.pop() as (e: unknown, fd?: number) => void;
      (openCb as (...a: unknown[]) => void)(p, ...rest, (err: unknown, fd?: number) => {
        if (!err && fd !== undefined) fdPath.set(fd, path.resolve(String(p)));
        cb(err, fd);
      });
    }) as typeof fs.open),
    vi.spyOn(fs, 'write').mockImplementation(((fd: number, ...rest: unknown[]) => {
      const cb = rest.pop() as (e: unknown, ...r: unknown[]) => void;
      const file = fileOf(fd);
      (writeCb as (...a: unknown[]) => void)(fd, ...rest, (err: unknown, ...r: unknown[]) => {
        if (!err) calls.push({ op: 'write', file });
        cb(err, ...r);
      });
    }) as typeof fs.write),
    vi.spyOn(fs, 'writeSync').mockImplementation(((fd: number, ...rest: unknown[]) => {
      calls.push({ op: 'write', file: fileOf(fd) });
      return (write as (...a: unknown[]) => number)(fd, ...rest);
    }) as typeof fs.writeSync),
    vi.spyOn(fs, 'fsyncSync').mockImplementation((fd: number) => {
      fsync(fd);
      calls.push({ op: 'fsync', file: fileOf(fd) });
    }),
    vi.spyOn(fs, 'fsync').mockImplementation(((fd: number, cb: (e: unknown) => void) => {
      const file = fileOf(fd);
      fsyncCb(fd, (err) => {
        if (!err) calls.push({ op: 'fsync', file });
        cb(err);
      });
    }) as typeof fs.fsync),
    vi.spyOn(fs, 'renameSync').mockImplementation((from: fs.PathLike, to: fs.PathLike) => {
      rename(from, to);
      calls.push({ op: 'rename', file: path.resolve(String(to)) });
    }),
    vi.spyOn(fs, 'rename').mockImplementation(((
      from: fs.PathLike,
      to: fs.PathLike,
      cb: (e: unknown) => void,
    ) => {
      renameCb(from, to, (err) => {
        if (!err) calls.push({ op: 'rename', file: path.resolve(String(to)) });
        cb(err);
      });
    }) as typeof fs.rename),
  ];
  return {
    calls,
    mark: (label) => calls.push({ op: 'mark', file: label }),
    restore: () => {
      for (const s of spies) s.mockRestore();
    },
  };
}
