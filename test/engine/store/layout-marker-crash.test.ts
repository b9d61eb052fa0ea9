/**
 * A power cut while a run with a layout is open (issue 31): its commits write the layout's files
 * without fsync, so the machine stopping can leave them as they were at the marker's seq (the
 * last flush) while the ledger, run.json and the marker are durable. The run, opened again, has
 * its layout's files re-projected from the ledger: they are what an uninterrupted run writes.
 *
 * The power cut is reproduced on disk: the layout's folder as it was at the marker's seq, the
 * marker put back, everything else as the commits left it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Command } from '../../../src/engine/commands.ts';
import { codexclawLayout } from '../../../src/engine/layouts/codexclaw/index.ts';
import { coordinatorLayout } from '../../../src/engine/layouts/coordinator/index.ts';
import { flowLayout } from '../../../src/engine/layouts/flow/index.ts';
import type { Layout, RunState } from '../../../src/engine/model.ts';
import { RunStore } from '../../../src/engine/store/run-store.ts';
import {
  COORDINATOR_WORKFLOW,
  FLOW_START_ISSUE_WORKFLOW,
  PABCD_WORKFLOW,
} from '../../../src/engine/workflow/builtin.ts';
import { traceFs } from '../../support/fs-trace.ts';
import { nextCommand, startCommand } from './fixtures/demo-run.ts';
import { RUN, runFiles, tempWorkspace } from './fixtures/workspace.ts';

/** The layouts whose files are plain files (codemachine's registry is a SQLite database). */
const CASES = [
  { layout: 'codexclaw', workflow: PABCD_WORKFLOW, dir: '.codexclaw' },
  { layout: 'flow', workflow: FLOW_START_ISSUE_WORKFLOW, dir: '.flow' },
  { layout: 'coordinator', workflow: COORDINATOR_WORKFLOW, dir: '.coordinator' },
] as const;

let ws: string | undefined;
afterEach(() => {
  if (ws) fs.rmSync(ws, { recursive: true, force: true });
  ws = undefined;
});

function openStore(workspace: string): RunStore {
  return new RunStore({ workspace, layouts: [codexclawLayout, flowLayout, coordinatorLayout] });
}

function commandFor(state: RunState, n: number): Command {
  const command = nextCommand(state, n);
  return command.type === 'answerCheckpoint' ? { ...command, reason: 'test' } : command;
}

/** Commits the driver's commands `from`..`to` (fewer when the run ends); the last state. */
async function drive(store: RunStore, state: RunState, from: number, to: number) {
  for (let n = from; n <= to && state.status !== 'completed'; n++) {
    const r = await store.commit(RUN, `k${n}`, commandFor(state, n));
    if (!r.ok) throw new Error(r.rejection.message);
    state = r.state;
  }
  return state;
}

/** Every file under `dir` with its text. */
function files(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (e.isFile()) {
      const p = path.join(e.parentPath, e.name);
      out[path.relative(dir, p)] = fs.readFileSync(p, 'utf8');
    }
  }
  return out;
}

/** Puts `dir` back to `content` (files only; folders made as needed). */
function restore(dir: string, content: Record<string, string>): void {
  fs.rmSync(dir, { recursive: true, force: true });
  for (const [rel, text] of Object.entries(content)) {
    fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    fs.writeFileSync(path.join(dir, rel), text, { mode: 0o600 });
  }
}

describe("a power cut before the layouts' files were flushed", () => {
  for (const c of CASES) {
    it(`${c.layout}: the reopened run re-projects them from the marker's seq`, async () => {
      ws = fs.realpathSync(tempWorkspace());
      const layoutDir = path.join(ws, c.dir);
      const { dir: runDir } = runFiles(ws);

      // Up to seq S: committed and released (flushed), so the layout's files are durable there.
      let store = openStore(ws);
      const r0 = await store.commit(RUN, 'start', {
        ...startCommand(RUN, ws),
        layout: c.layout as Layout,
        workflow: c.workflow,
        ...(c.layout === 'coordinator' && { selectedTrack: 'supervised' }),
      });
      if (!r0.ok) throw new Error(r0.rejection.message);
      let state = await drive(store, r0.state, 1, 2);
      await store.release(RUN);
      const atFlush = files(layoutDir);
      const flushedSeq = state.seq;

      // More commits while the run stays open: the marker names S, the files moved on.
      state = await drive(store, state, 3, 9);
      expect(state.seq).toBeGreaterThan(flushedSeq);
      const marker = fs.readdirSync(runDir).filter((n) => n.startsWith('layouts-since-'));
      expect(marker).toEqual([`layouts-since-${flushedSeq}`]);
      const uninterrupted = files(layoutDir);
      expect(uninterrupted).not.toEqual(atFlush);
      await store.close();

      // The power cut: the layout's unflushed writes are lost, the marker (durable) is there.
      restore(layoutDir, atFlush);
      fs.writeFileSync(path.join(runDir, marker[0]!), '');

      store = openStore(ws);
      const loaded = await store.load(RUN);
      expect(loaded.state.seq).toBe(state.seq);
      expect(files(layoutDir)).toEqual(uninterrupted);
      await store.close();
      // Released again: flushed, the marker is gone.
      expect(fs.readdirSync(runDir).filter((n) => n.startsWith('layouts-since-'))).toEqual([]);
    });
  }
});

describe("coordinator's archive at completion", () => {
  it('moves .coordinator aside only once its state.json is fsynced (the marker does not cover an archive)', async () => {
    ws = fs.realpathSync(tempWorkspace());
    const store = openStore(ws);
    const r0 = await store.commit(RUN, 'start', {
      ...startCommand(RUN, ws),
      layout: 'coordinator',
      workflow: COORDINATOR_WORKFLOW,
      selectedTrack: 'supervised',
    });
    if (!r0.ok) throw new Error(r0.rejection.message);
    let state = r0.state;
    const trace = traceFs();
    try {
      for (let n = 1; n <= 60 && state.status !== 'completed'; n++) {
        state = await drive(store, state, n, n);
      }
    } finally {
      trace.restore();
      await store.close();
    }
    expect(state.status).toBe('completed');
    const dir = path.join(ws, '.coordinator');
    const archive = trace.calls.findIndex(
      (t) => t.op === 'rename' && path.basename(t.file).startsWith('.coordinator.archive.'),
    );
    expect(archive).toBeGreaterThan(0);
    // The last state.json put in place before the archive: its temp file and its folder were
    // fsynced first (a commit's other coordinator writes are not: the marker covers those).
    const before = trace.calls.slice(0, archive);
    const stateJson = path.join(dir, 'state.json');
    const placed = before.findLastIndex((t) => t.op === 'rename' && t.file === stateJson);
    expect(placed).toBeGreaterThanOrEqual(0);
    const tempSynced = before.findLastIndex(
      (t, i) =>
        i < placed && t.op === 'fsync' && /\/\.state\.json\.\d+\.[0-9a-f]{8}\.tmp$/.test(t.file),
    );
    const previousPlace = before.findLastIndex(
      (t, i) => i < placed && t.op === 'rename' && t.file === stateJson,
    );
    expect(tempSynced).toBeGreaterThan(previousPlace);
    expect(before.slice(placed).some((t) => t.op === 'fsync' && t.file === dir)).toBe(true);
  });
});
