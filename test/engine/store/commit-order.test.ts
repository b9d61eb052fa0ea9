/**
 * Durability a test can see: SIGKILL (crash.test.ts) cannot tell a missing fsync from a present
 * one, because the page cache survives a killed process. This test traces the file-system calls
 * the store makes (node's own `fs` object, observed and passed through unchanged) and checks
 * their order: every ledger line is written and fsynced before any projection is renamed into
 * place. Removing the fsync from `LedgerWriter.append` makes it fail.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { RunStore } from '../../../src/engine/store/run-store.ts';
import { driveRun, runFiles, tempWorkspace } from './fixtures/workspace.ts';

/** One observed call: what it did and to which file (resolved through the fd it was opened as). */
interface Traced {
  readonly op: 'write' | 'fsync' | 'rename';
  readonly file: string;
}

/** Wraps openSync/writeSync/fsyncSync/renameSync so each call is recorded, then runs it. */
function traceFs(): { calls: Traced[]; restore: () => void } {
  const calls: Traced[] = [];
  const fdPath = new Map<number, string>();
  const open = fs.openSync;
  const write = fs.writeSync;
  const fsync = fs.fsyncSync;
  const rename = fs.renameSync;
  const spies = [
    vi.spyOn(fs, 'openSync').mockImplementation(((p: fs.PathLike, ...rest: unknown[]) => {
      const fd = (open as (...a: unknown[]) => number)(p, ...rest);
      fdPath.set(fd, path.resolve(String(p)));
      return fd;
    }) as typeof fs.openSync),
    vi.spyOn(fs, 'writeSync').mockImplementation(((fd: number, ...rest: unknown[]) => {
      calls.push({ op: 'write', file: fdPath.get(fd) ?? `fd:${fd}` });
      return (write as (...a: unknown[]) => number)(fd, ...rest);
    }) as typeof fs.writeSync),
    vi.spyOn(fs, 'fsyncSync').mockImplementation((fd: number) => {
      calls.push({ op: 'fsync', file: fdPath.get(fd) ?? `fd:${fd}` });
      fsync(fd);
    }),
    vi.spyOn(fs, 'renameSync').mockImplementation((from: fs.PathLike, to: fs.PathLike) => {
      calls.push({ op: 'rename', file: path.resolve(String(to)) });
      rename(from, to);
    }),
  ];
  const restore = () => {
    for (const s of spies) s.mockRestore();
  };
  return { calls, restore };
}

/**
 * Checks each rename against the ledger's state at that moment: a ledger line written and not
 * yet fsynced is a violation (a power loss could keep the projection and lose the line).
 */
function renamesBeforeLedgerFsync(calls: readonly Traced[], ledger: string): string[] {
  const problems: string[] = [];
  let unsynced = false;
  calls.forEach((c, i) => {
    if (c.file === ledger && c.op === 'write') unsynced = true;
    if (c.file === ledger && c.op === 'fsync') unsynced = false;
    if (c.op === 'rename' && unsynced) {
      problems.push(`call ${i}: ${path.basename(c.file)} renamed before the ledger was fsynced`);
    }
  });
  return problems;
}

let ws: string;
let store: RunStore;
let trace: ReturnType<typeof traceFs>;
beforeEach(() => {
  ws = tempWorkspace();
  store = new RunStore({ workspace: ws });
  trace = traceFs();
});
afterEach(async () => {
  trace.restore();
  await store.close();
  fs.rmSync(ws, { recursive: true, force: true });
});

describe('commit order on disk', () => {
  it('every ledger append is fsynced before a projection is renamed into place', async () => {
    await driveRun(store, ws, 6);
    const { ledger, runJson } = runFiles(ws);
    const ledgerPath = fs.realpathSync(ledger);
    const calls = trace.calls.map((c) => (c.file === ledger ? { ...c, file: ledgerPath } : c));
    const ledgerWrites = calls.filter((c) => c.op === 'write' && c.file === ledgerPath);
    const runJsonRenames = calls.filter((c) => c.op === 'rename' && c.file === runJson);
    // The trace saw the commits (7 lines, 7 projections), so an empty trace cannot pass.
    expect(ledgerWrites.length).toBeGreaterThanOrEqual(7);
    expect(runJsonRenames).toHaveLength(7);
    expect(renamesBeforeLedgerFsync(calls, ledgerPath)).toEqual([]);
  });

  it('a projection is renamed only after its own ledger line was written', async () => {
    await driveRun(store, ws, 3);
    const { ledger, runJson } = runFiles(ws);
    // Between two run.json renames there is exactly one ledger write + fsync (one commit each).
    let sinceRename: string[] = [];
    const perCommit: string[][] = [];
    for (const c of trace.calls) {
      if (c.file === ledger) sinceRename.push(c.op);
      if (c.op === 'rename' && c.file === runJson) {
        perCommit.push(sinceRename);
        sinceRename = [];
      }
    }
    expect(perCommit).toHaveLength(4);
    for (const ops of perCommit) expect(ops.slice(-2)).toEqual(['write', 'fsync']);
  });
});
