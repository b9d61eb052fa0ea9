/**
 * How a commit waits for the disk (issue 31): every file of a commit is written before any of
 * its fsyncs starts, so the file system's journal takes them in one commit, and a new run's
 * folder entries are fsynced beside its first ledger line instead of one after the other before
 * it. Both are checked on node's own `fs` calls (spied and passed through unchanged), since a
 * killed process cannot tell a missing or late fsync from a present one.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { RunState } from '../../../src/engine/model.ts';
import { RunStore } from '../../../src/engine/store/run-store.ts';
import { traceFs } from '../../support/fs-trace.ts';
import { nextCommand, startCommand } from './fixtures/demo-run.ts';
import { driveRun, RUN, runFiles, tempWorkspace } from './fixtures/workspace.ts';

let ws: string;
let store: RunStore;
beforeEach(() => {
  ws = tempWorkspace();
  store = new RunStore({ workspace: ws });
});
afterEach(async () => {
  await store.close();
  fs.rmSync(ws, { recursive: true, force: true });
});

/** What the run folder held when an fsync was asked for (not when it completed). */
interface FsyncAsked {
  file: string;
  ledgerBytes: number;
  /** run.json temp files beside run.json, with their content's seq. */
  staged: number[];
}

/** Records each thread-pool fsync as it is asked for, with the run folder's state then. */
function watchFsyncs(dir: string, ledger: string): { asked: FsyncAsked[]; restore(): void } {
  const asked: FsyncAsked[] = [];
  const fsync = fs.fsync;
  const spy = vi.spyOn(fs, 'fsync').mockImplementation(((
    fd: number,
    cb: (e: NodeJS.ErrnoException | null) => void,
  ) => {
    const staged = (fs.existsSync(dir) ? fs.readdirSync(dir) : [])
      .filter((f) => /^\.run\.json\..*\.tmp$/.test(f))
      .map((f) => JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')).seq as number);
    const file = fs.readlinkSync(`/proc/self/fd/${fd}`);
    const ledgerBytes = fs.statSync(ledger, { throwIfNoEntry: false })?.size ?? -1;
    asked.push({ file, ledgerBytes, staged });
    fsync(fd, cb);
  }) as typeof fs.fsync);
  return { asked, restore: () => spy.mockRestore() };
}

/**
 * Drives the run to its first state, then commits its commands 2..`last` with the fsyncs of its
 * folder watched; `seen` reads a figure after each of those commits.
 */
async function watchedCommits(
  last: number,
  seen: (state: RunState, ledger: string) => number,
): Promise<{ watch: ReturnType<typeof watchFsyncs>; realLedger: string; seen: number[] }> {
  let state = await driveRun(store, ws, 1);
  const { dir, ledger } = runFiles(ws);
  const realLedger = fs.realpathSync(ledger);
  const watch = watchFsyncs(dir, ledger);
  const figures: number[] = [];
  try {
    for (let n = 2; n <= last; n++) {
      const r = await store.commit(RUN, `k${n}`, nextCommand(state, n));
      if (!r.ok) throw new Error(r.rejection.message);
      state = r.state;
      figures.push(seen(state, ledger));
    }
  } finally {
    watch.restore();
  }
  return { watch, realLedger, seen: figures };
}

describe('a commit waits for the disk once for its files', () => {
  it("the ledger line's fsync starts with the next run.json already written beside it", async () => {
    const { watch, realLedger, seen: seqs } = await watchedCommits(5, (state) => state.seq);
    const ledgerFsyncs = watch.asked.filter((a) => a.file === realLedger);
    expect(ledgerFsyncs).toHaveLength(4);
    // Each ledger fsync was asked for with its commit's run.json staged (the state it yields),
    // so the two fsyncs run together, not the run.json one after a journal commit of its own.
    expect(ledgerFsyncs.map((a) => a.staged)).toEqual(seqs.map((s) => [s]));
    // And no staged run.json was fsynced before its ledger line was written.
    const tempFsyncs = watch.asked.filter((a) => /\.run\.json\..*\.tmp$/.test(a.file));
    expect(tempFsyncs).toHaveLength(4);
    tempFsyncs.forEach((t, i) => {
      expect(t.ledgerBytes).toBe(ledgerFsyncs[i]!.ledgerBytes);
    });
  });

  it("the staged run.json's fsync is asked for first, the line's right after it (one journal commit)", async () => {
    const {
      watch,
      realLedger,
      seen: sizes,
    } = await watchedCommits(4, (_state, ledger) => fs.statSync(ledger).size);
    // Issue 31: asked for the other way round, the line's fsync made the journal commit without
    // the staged file's data, and run.json's rename waited for a second commit.
    const order = watch.asked
      .filter((a) => a.file === realLedger || /\.run\.json\..*\.tmp$/.test(a.file))
      .map((a) => (a.file === realLedger ? `line@${a.ledgerBytes}` : `run.json@${a.ledgerBytes}`));
    expect(order).toEqual(sizes.flatMap((size) => [`run.json@${size}`, `line@${size}`]));
  });

  it("a new run's first line is fsynced with its first run.json already written beside it", async () => {
    const { dir, ledger } = runFiles(ws);
    const watch = watchFsyncs(dir, ledger);
    let seq = 0;
    try {
      const r = await store.commit(RUN, 'start', startCommand(RUN, ws));
      if (!r.ok) throw new Error(r.rejection.message);
      seq = r.state.seq;
    } finally {
      watch.restore();
    }
    const realLedger = fs.realpathSync(ledger);
    const line = watch.asked.filter((a) => a.file === realLedger);
    expect(line).toHaveLength(1);
    expect(line[0]!.staged).toEqual([seq]);
    expect(fs.readdirSync(dir).sort()).toEqual(['ledger.jsonl', 'lock', 'logs', 'run.json']);
  });

  it("a new run's folder entries are fsynced beside its first line, durable when the start resolves", async () => {
    const { dir, ledger } = runFiles(ws);
    const trace = traceFs();
    try {
      trace.mark('start');
      const r = await store.commit(RUN, 'start', startCommand(RUN, ws));
      if (!r.ok) throw new Error(r.rejection.message);
      trace.mark('started');
    } finally {
      trace.restore();
    }
    const calls = trace.calls;
    const at = (pred: (i: number) => boolean) => calls.findIndex((_, i) => pred(i));
    const firstLine = at((i) => calls[i]!.op === 'write' && calls[i]!.file === ledger);
    const runsSynced = at((i) => calls[i]!.op === 'fsync' && calls[i]!.file === path.dirname(dir));
    const dirSynced = at((i) => calls[i]!.op === 'fsync' && calls[i]!.file === dir);
    const started = at((i) => calls[i]!.op === 'mark' && calls[i]!.file === 'started');
    expect(firstLine).toBeGreaterThan(0);
    // The two folder fsyncs complete after the line was written (they ran beside its fsync)...
    expect(runsSynced).toBeGreaterThan(firstLine);
    expect(dirSynced).toBeGreaterThan(firstLine);
    // ...and before the start was answered: the run's folder and ledger survive a power cut.
    expect(runsSynced).toBeLessThan(started);
    expect(dirSynced).toBeLessThan(started);
  });

  it('a folder fsync that fails fails the start, which commits once the disk answers again', async () => {
    const { dir, ledger } = runFiles(ws);
    const fsync = fs.fsync;
    let refused = 0;
    const spy = vi.spyOn(fs, 'fsync').mockImplementation(((
      fd: number,
      cb: (e: NodeJS.ErrnoException | null) => void,
    ) => {
      if (refused === 0 && fs.readlinkSync(`/proc/self/fd/${fd}`) === fs.realpathSync(dir)) {
        refused++;
        cb(Object.assign(new Error('EIO: i/o error, fsync'), { code: 'EIO' }));
        return;
      }
      fsync(fd, cb);
    }) as typeof fs.fsync);
    try {
      await expect(store.commit(RUN, 'start', startCommand(RUN, ws))).rejects.toThrow(/EIO/);
    } finally {
      spy.mockRestore();
    }
    expect(refused).toBe(1);
    // The line was taken back: no run exists, and the retried start is the first line.
    expect(fs.readFileSync(ledger, 'utf8')).toBe('');
    const r = await store.commit(RUN, 'start', startCommand(RUN, ws));
    expect(r.ok && r.state.seq).toBeGreaterThan(0);
    expect(fs.readFileSync(ledger, 'utf8').split('\n').filter(Boolean)).toHaveLength(1);
  });
});
