/**
 * Durability a test can see: SIGKILL (crash.test.ts) cannot tell a missing fsync from a present
 * one, because the page cache survives a killed process. This test traces the file-system calls
 * the store makes (node's own `fs` object, observed and passed through unchanged) and checks
 * their order: every ledger line is written and fsynced before any projection is renamed into
 * place. Removing the fsync from `LedgerWriter.append` makes it fail. The fsyncs and renames that
 * run on the thread pool are recorded when they complete.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { RunStore } from '../../../src/engine/store/run-store.ts';
import { type Traced, traceFs } from '../../support/fs-trace.ts';
import { nextCommand } from './fixtures/demo-run.ts';
import { driveRun, RUN, readRunJsonFile, runFiles, tempWorkspace } from './fixtures/workspace.ts';

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

const RUN_ID = RUN;
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

  it('run.json is durable when its commit resolves: file fsynced, renamed, folder fsynced', async () => {
    let state = await driveRun(store, ws, 0);
    const { dir, ledger, runJson } = runFiles(ws);
    for (let n = 1; n <= 3; n++) {
      trace.mark(`commit ${n}`);
      const r = await store.commit(RUN_ID, `d${n}`, nextCommand(state, n));
      if (!r.ok) throw new Error(r.rejection.message);
      state = r.state;
    }
    trace.mark('end');
    // Per commit: the ledger's fsync and the temp run.json's fsync (run at the same time, so in
    // either order), then the rename, then the run folder's fsync, and all of them before the
    // commit resolved (the next mark).
    const per = sliceByMarks(trace.calls).slice(1, -1);
    expect(per).toHaveLength(3);
    for (const calls of per) {
      const steps = calls.flatMap((c) => {
        if (c.op === 'fsync' && c.file === ledger) return ['ledger fsync'];
        if (c.op === 'fsync' && /\.run\.json\..*\.tmp$/.test(c.file)) return ['run.json fsync'];
        if (c.op === 'rename' && c.file === runJson) return ['run.json rename'];
        if (c.op === 'fsync' && c.file === dir) return ['folder fsync'];
        return [];
      });
      expect(steps).toHaveLength(4);
      expect([...steps.slice(0, 2)].sort()).toEqual(['ledger fsync', 'run.json fsync']);
      expect(steps.slice(2)).toEqual(['run.json rename', 'folder fsync']);
    }
  });

  it('a ledger append that fails leaves run.json as it was and no temp file behind', async () => {
    const state = await driveRun(store, ws, 2);
    const { dir, ledger } = runFiles(ws);
    const before = fs.readFileSync(path.join(dir, 'run.json'), 'utf8');
    trace.restore();
    // The disk refuses the ledger's fsync once (as a full or failing disk does).
    const fsync = fs.fsync;
    let failed = false;
    const spy = vi.spyOn(fs, 'fsync').mockImplementation(((
      fd: number,
      cb: (e: unknown) => void,
    ) => {
      const isLedger = fs.readlinkSync(`/proc/self/fd/${fd}`) === fs.realpathSync(ledger);
      if (isLedger && !failed) {
        failed = true;
        cb(Object.assign(new Error('EIO: i/o error, fsync'), { code: 'EIO' }));
        return;
      }
      fsync(fd, cb);
    }) as typeof fs.fsync);
    try {
      await expect(store.commit(RUN_ID, 'fails', nextCommand(state, 3))).rejects.toThrow(/EIO/);
    } finally {
      spy.mockRestore();
    }
    expect(failed).toBe(true);
    expect(fs.readFileSync(path.join(dir, 'run.json'), 'utf8')).toBe(before);
    expect(fs.readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
    // The run goes on: the same command commits once the disk answers again.
    const r = await store.commit(RUN_ID, 'fails', nextCommand(state, 3));
    expect(r.ok && r.state.seq).toBeGreaterThan(state.seq);
  });

  it('a deferred projection leaves run.json to project(), which writes it durably', async () => {
    const state = await driveRun(store, ws, 0);
    const { dir, ledger, runJson } = runFiles(ws);
    trace.mark('commit');
    const r = await store.commit(RUN_ID, 'd1', nextCommand(state, 1), { deferProjection: true });
    if (!r.ok) throw new Error(r.rejection.message);
    trace.mark('committed');
    // The line is durable, run.json still shows the state before it.
    expect(readRunJsonFile(ws).seq).toBe(state.seq);
    await store.project(RUN_ID);
    trace.mark('projected');
    expect(readRunJsonFile(ws).seq).toBe(r.state.seq);
    const [, committing, projecting] = sliceByMarks(trace.calls);
    const ops = (calls: readonly Traced[]) =>
      calls
        .filter((c) => c.op !== 'write' && [ledger, runJson, dir].includes(c.file))
        .map((c) => `${c.op} ${path.basename(c.file)}`);
    expect(ops(committing!)).toEqual(['fsync ledger.jsonl']);
    expect(ops(projecting!)).toEqual(['rename run.json', `fsync ${path.basename(dir)}`]);
    // A second project() has nothing left to write.
    const before = trace.calls.length;
    expect(await store.project(RUN_ID)).toBeNull();
    expect(trace.calls.slice(before).filter((c) => c.op === 'rename')).toEqual([]);
  });
});

/** The calls between marks: [before the first mark, after it, …]. */
function sliceByMarks(calls: readonly Traced[]): Traced[][] {
  const out: Traced[][] = [[]];
  for (const c of calls) {
    if (c.op === 'mark') out.push([]);
    else out.at(-1)!.push(c);
  }
  return out;
}
