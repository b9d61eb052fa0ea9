/**
 * Commit order with a layout projection (codemachine, codexclaw, flow, coordinator): each
 * layout's files are staged while the ledger line is fsynced and put in place only after it.
 * Traced on node's own `fs` (test/support/fs-trace.ts): no layout file is renamed or appended to
 * before its commit's ledger line is durable, nor before the layouts' marker is durable in the
 * run folder (the commit does not fsync the layouts' files: layout-marker.ts); releasing the run
 * fsyncs every layout folder that changed and removes the marker. codemachine's files (read back
 * as hand edits) are durable before run.json is renamed, every commit. A failed append leaves
 * every layout file as it was, with no temp file and no lock left behind.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Command } from '../../../src/engine/commands.ts';
import { CodemachineLayout } from '../../../src/engine/layouts/codemachine/index.ts';
import { codexclawLayout } from '../../../src/engine/layouts/codexclaw/index.ts';
import { coordinatorLayout } from '../../../src/engine/layouts/coordinator/index.ts';
import { flowLayout } from '../../../src/engine/layouts/flow/index.ts';
import type { Layout, RunState } from '../../../src/engine/model.ts';
import { RunStore } from '../../../src/engine/store/run-store.ts';
import {
  COORDINATOR_WORKFLOW,
  DEMO_WORKFLOW,
  FLOW_START_ISSUE_WORKFLOW,
  PABCD_WORKFLOW,
} from '../../../src/engine/workflow/builtin.ts';
import { type Traced, traceFs } from '../../support/fs-trace.ts';
import { waitUntil } from '../../support/slowdown.ts';
import { nextCommand, startCommand } from './fixtures/demo-run.ts';
import { RUN, runFiles, tempWorkspace } from './fixtures/workspace.ts';

/** Each layout, its built-in workflow and the folder its files live in. */
const CASES = [
  { layout: 'codemachine', workflow: DEMO_WORKFLOW, dir: '.codemachine' },
  { layout: 'codexclaw', workflow: PABCD_WORKFLOW, dir: '.codexclaw' },
  { layout: 'flow', workflow: FLOW_START_ISSUE_WORKFLOW, dir: '.flow' },
  { layout: 'coordinator', workflow: COORDINATOR_WORKFLOW, dir: '.coordinator' },
] as const;

let ws: string | undefined;
let store: RunStore | undefined;
let codemachine: CodemachineLayout | undefined;
afterEach(async () => {
  vi.restoreAllMocks();
  await store?.close();
  codemachine?.close();
  if (ws) fs.rmSync(ws, { recursive: true, force: true });
  store = undefined;
  ws = undefined;
});

function openStore(workspace: string): RunStore {
  codemachine = new CodemachineLayout({ agentInfo: () => undefined });
  return new RunStore({
    workspace,
    layouts: [codemachine, codexclawLayout, flowLayout, coordinatorLayout],
  });
}

/** The driver's n-th command for a run of `layout` (codexclaw's gates want a reason). */
function commandFor(state: RunState, n: number): Command {
  const command = nextCommand(state, n);
  return command.type === 'answerCheckpoint' ? { ...command, reason: 'test' } : command;
}

async function start(s: RunStore, workspace: string, c: (typeof CASES)[number]) {
  const r = await s.commit(RUN, 'start', {
    ...startCommand(RUN, workspace),
    layout: c.layout as Layout,
    workflow: c.workflow,
    ...(c.layout === 'coordinator' && { selectedTrack: 'supervised' }),
  });
  if (!r.ok) throw new Error(r.rejection.message);
  return r.state;
}

/** Every file under `dir` with its bytes (folders and lock files named), for before/after. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    const p = path.join(e.parentPath, e.name);
    // SQLite's shared-memory index changes with any reader; the database and its WAL are compared.
    if (p.endsWith('-shm')) continue;
    out[path.relative(dir, p)] = e.isFile() ? fs.readFileSync(p, 'latin1') : '<dir>';
  }
  return out;
}

/** Inode of every file under `dir`: a file replaced by a rename (or new) gets a new one. */
function inodes(dir: string): Map<string, number> {
  const out = new Map<string, number>();
  if (!fs.existsSync(dir)) return out;
  for (const e of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (e.isFile())
      out.set(path.join(e.parentPath, e.name), fs.statSync(path.join(e.parentPath, e.name)).ino);
  }
  return out;
}

/** Temp files (a staged write) under `dir`. */
function temps(dir: string): string[] {
  return [...inodes(dir).keys()].filter((f) => f.endsWith('.tmp'));
}

/** True when `f` is a layout file under `layoutDir` (not a temp file). */
function isLayoutFile(f: string, layoutDir: string): boolean {
  return f.startsWith(`${layoutDir}${path.sep}`) && !path.basename(f).endsWith('.tmp');
}

/** Checks one commit's calls: nothing in the layout folder renamed or written in place before the ledger's fsync. */
function orderProblems(calls: readonly Traced[], ledger: string, layoutDir: string): string[] {
  const problems: string[] = [];
  let durable = false;
  calls.forEach((c, i) => {
    if (c.file === ledger && c.op === 'fsync') durable = true;
    const touchesLayout =
      isLayoutFile(c.file, layoutDir) && (c.op === 'rename' || c.op === 'write');
    if (touchesLayout && !durable) {
      problems.push(
        `call ${i}: ${c.op} ${path.relative(layoutDir, c.file)} before the ledger fsync`,
      );
    }
  });
  return problems;
}

/** Layout folders a file was renamed into and not fsynced yet when a run.json rename came. */
function runJsonBeforeLayoutSync(calls: readonly Traced[], layoutDir: string): string[] {
  const problems: string[] = [];
  const renamedDirs = new Set<string>();
  calls.forEach((c, i) => {
    if (c.op === 'rename' && isLayoutFile(c.file, layoutDir)) renamedDirs.add(path.dirname(c.file));
    if (c.op === 'fsync') renamedDirs.delete(c.file);
    if (c.op === 'rename' && path.basename(c.file) === 'run.json' && renamedDirs.size > 0) {
      problems.push(
        `call ${i}: run.json renamed before ${[...renamedDirs].join(', ')} was fsynced`,
      );
    }
  });
  return problems;
}

/** The layouts' markers in the run folder (layout-marker.ts). */
function markers(runDir: string): string[] {
  return fs.readdirSync(runDir).filter((n) => n.startsWith('layouts-since-'));
}

describe('a layout projection is staged during the ledger fsync and published after it', () => {
  for (const c of CASES) {
    const everyCommit = c.layout === 'codemachine';
    const title = everyCommit
      ? 'no layout file moves before its ledger line is durable, run.json after they are'
      : 'no layout file moves before its ledger line and the marker are durable; the release fsyncs them';
    it(`${c.layout}: ${title}`, async () => {
      ws = fs.realpathSync(tempWorkspace());
      store = openStore(ws);
      const { ledger, dir: runDir } = runFiles(ws);
      // Traced from before the run is opened, so that the ledger's fd is known by its path.
      const trace = traceFs({ creates: true });
      const perCommit: Traced[][] = [];
      let released: Traced[] = [];
      try {
        let state = await start(store, ws, c);
        for (let n = 1; n <= 12 && state.status !== 'completed'; n++) {
          const from = trace.calls.length;
          const r = await store.commit(RUN, `k${n}`, commandFor(state, n));
          if (!r.ok) throw new Error(r.rejection.message);
          expect(r.warnings).toBeUndefined();
          state = r.state;
          perCommit.push(trace.calls.slice(from));
          // While the run is open, its layouts' files may be ahead of the disk: the marker says so.
          expect(markers(runDir)).toEqual(everyCommit ? [] : ['layouts-since-0']);
        }
        const from = trace.calls.length;
        await store.release(RUN);
        released = trace.calls.slice(from);
      } finally {
        trace.restore();
      }
      const layoutDir = path.join(ws, c.dir);
      // The trace saw the ledger's fsyncs and layout files change (an empty trace cannot pass).
      const all = perCommit.flat();
      expect(all.filter((t) => t.op === 'fsync' && t.file === ledger)).toHaveLength(
        perCommit.length,
      );
      const layoutRenames = all.filter((t) => t.op === 'rename' && t.file.startsWith(layoutDir));
      expect(layoutRenames.length).toBeGreaterThan(0);
      for (const calls of perCommit) expect(orderProblems(calls, ledger, layoutDir)).toEqual([]);
      if (everyCommit) {
        for (const calls of perCommit)
          expect(runJsonBeforeLayoutSync(calls, layoutDir)).toEqual([]);
        return;
      }
      // The marker was durable (its folder fsynced) before the first layout file moved.
      const firstMove = trace.calls.findIndex(
        (t) => isLayoutFile(t.file, layoutDir) && (t.op === 'rename' || t.op === 'write'),
      );
      // (It is fsynced beside the start's first line, as the new ledger's folder entry is.)
      const marked = trace.calls.findIndex(
        (t) => t.op === 'create' && path.basename(t.file).startsWith('layouts-since-'),
      );
      const runDirSync = trace.calls.findIndex(
        (t, i) => i > marked && t.op === 'fsync' && t.file === runDir,
      );
      expect(marked).toBeGreaterThanOrEqual(0);
      expect(runDirSync).toBeGreaterThan(marked);
      expect(runDirSync).toBeLessThan(firstMove);
      // Released: every layout folder a file was renamed into is fsynced, and the marker is gone.
      const renamedDirs = new Set(
        trace.calls
          .filter((t) => t.op === 'rename' && isLayoutFile(t.file, layoutDir))
          .map((t) => path.dirname(t.file)),
      );
      const synced = new Set(released.filter((t) => t.op === 'fsync').map((t) => t.file));
      expect([...renamedDirs].filter((d) => !synced.has(d))).toEqual([]);
      expect(markers(runDir)).toEqual([]);
    });
  }

  for (const c of CASES) {
    it(`${c.layout}: its next files are written beside their places while the ledger fsync runs`, async () => {
      // A first run tells which commands replace a layout file (the driver is deterministic).
      const dry = fs.realpathSync(tempWorkspace());
      const replaces: boolean[] = [];
      const dryStore = openStore(dry);
      try {
        let state = await start(dryStore, dry, c);
        for (let n = 1; n <= 6 && state.status !== 'completed'; n++) {
          const before = inodes(path.join(dry, c.dir));
          const r = await dryStore.commit(RUN, `k${n}`, commandFor(state, n));
          if (!r.ok) throw new Error(r.rejection.message);
          state = r.state;
          const after = inodes(path.join(dry, c.dir));
          replaces.push([...after].some(([f, ino]) => before.get(f) !== ino));
        }
      } finally {
        await dryStore.close();
        codemachine?.close();
        fs.rmSync(dry, { recursive: true, force: true });
      }
      expect(replaces.filter(Boolean).length).toBeGreaterThan(0);

      ws = fs.realpathSync(tempWorkspace());
      store = openStore(ws);
      let state = await start(store, ws, c);
      const layoutDir = path.join(ws, c.dir);
      const { ledger } = runFiles(ws);
      for (let n = 1; n <= replaces.length; n++) {
        // The ledger's fsync is held until the test lets it go.
        const fsync = fs.fsync;
        let letGo: (() => void) | null = null;
        vi.spyOn(fs, 'fsync').mockImplementation(((fd: number, cb: (e: unknown) => void) => {
          if (letGo === null && fs.readlinkSync(`/proc/self/fd/${fd}`) === ledger) {
            letGo = () => fsync(fd, cb);
            return;
          }
          fsync(fd, cb);
        }) as typeof fs.fsync);
        const before = inodes(layoutDir);
        const committing = store.commit(RUN, `k${n}`, commandFor(state, n));
        await waitUntil(() => letGo !== null, { message: 'the ledger was never fsynced' });
        if (replaces[n - 1]) {
          // Staged: the temp file is there while the line is not durable, its target unchanged.
          await waitUntil(() => temps(layoutDir).length > 0, {
            message: `command ${n}: no ${c.layout} file staged during the ledger fsync`,
          });
          const now = inodes(layoutDir);
          expect([...before].filter(([f, ino]) => now.get(f) !== ino)).toEqual([]);
        }
        (letGo as unknown as () => void)();
        vi.restoreAllMocks();
        const r = await committing;
        if (!r.ok) throw new Error(r.rejection.message);
        expect(r.warnings).toBeUndefined();
        state = r.state;
        expect(temps(layoutDir)).toEqual([]);
      }
    });
  }

  for (const c of CASES) {
    it(`${c.layout}: a failed ledger append discards the staged files (no temp file, no lock left)`, async () => {
      ws = fs.realpathSync(tempWorkspace());
      store = openStore(ws);
      let state = await start(store, ws, c);
      const layoutDir = path.join(ws, c.dir);
      const { ledger } = runFiles(ws);
      // Each command is first refused by the disk, then committed; at least one of them changes
      // the layout's files, so "as they were" is checked against a projection that had work.
      let changed = 0;
      for (let n = 1; n <= 8 && state.status !== 'completed'; n++) {
        const before = snapshot(layoutDir);
        // The disk refuses the ledger's fsync once (as a full or failing disk does).
        const fsync = fs.fsync;
        let failed = false;
        vi.spyOn(fs, 'fsync').mockImplementation(((fd: number, cb: (e: unknown) => void) => {
          if (!failed && fs.readlinkSync(`/proc/self/fd/${fd}`) === ledger) {
            failed = true;
            cb(Object.assign(new Error('EIO: i/o error, fsync'), { code: 'EIO' }));
            return;
          }
          fsync(fd, cb);
        }) as typeof fs.fsync);
        const command = commandFor(state, n);
        await expect(store.commit(RUN, `k${n}`, command)).rejects.toThrow(/EIO/);
        vi.restoreAllMocks();
        expect(failed).toBe(true);
        // Nothing of the refused commit, no temp file, no lock file.
        expect(snapshot(layoutDir)).toEqual(before);
        // The same command commits once the disk answers again.
        const r = await store.commit(RUN, `k${n}`, command);
        if (!r.ok) throw new Error(r.rejection.message);
        expect(r.warnings).toBeUndefined();
        expect(r.duplicate).toBe(false);
        state = r.state;
        const after = snapshot(layoutDir);
        const leftovers = Object.keys(after).filter((f) => /\.tmp$|\.lock$/.test(f));
        expect(leftovers).toEqual([]);
        if (JSON.stringify(after) !== JSON.stringify(before)) changed++;
      }
      expect(changed).toBeGreaterThan(1);
    });
  }
});
