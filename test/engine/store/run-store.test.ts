import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { LayoutProjection, ProjectionContext } from '../../../src/engine/layouts/port.ts';
import { RunStore } from '../../../src/engine/store/run-store.ts';
import { AT, nextCommand, startCommand } from './fixtures/demo-run.ts';
import {
  driveRun,
  ledgerLines,
  RUN,
  readRunJsonFile,
  replayLedger,
  runFiles,
  summaryOf,
  tempWorkspace,
} from './fixtures/workspace.ts';

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

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    return (err as { code?: string }).code ?? String(err);
  }
  return 'no error';
}

describe('RunStore.commit', () => {
  it('a start creates the run folder, one ledger line, run.json and logs/, and returns effects', async () => {
    const r = await store.commit(RUN, 'start', startCommand(RUN, ws));
    expect(r.ok && r.duplicate).toBe(false);
    if (!r.ok) return;
    expect(r.effects).toEqual([expect.objectContaining({ type: 'enqueueStep', stepId: 'plan' })]);
    const files = runFiles(ws);
    expect(fs.readdirSync(files.dir).sort()).toEqual(['ledger.jsonl', 'lock', 'logs', 'run.json']);
    const [line] = ledgerLines(ws);
    expect(JSON.parse(line!)).toMatchObject({
      v: 1,
      seq: r.state.seq,
      key: 'start',
      at: AT,
      command: 'start',
      actor: { id: 'cli:alice' },
      events: r.events,
      effects: r.effects,
    });
    expect(readRunJsonFile(ws)).toEqual(summaryOf(r.state));
    expect(await store.list()).toEqual([RUN]);
  });

  it('a repeated key returns the first outcome and appends nothing, also after a restart', async () => {
    const state = await driveRun(store, ws, 2);
    const cmd = nextCommand(state, 3);
    const first = await store.commit(RUN, 'k3', cmd);
    const lines = ledgerLines(ws).length;
    const again = await store.commit(RUN, 'k3', cmd);
    expect(again).toEqual(first.ok ? { ...first, duplicate: true } : null);
    expect(ledgerLines(ws)).toHaveLength(lines);

    await store.close();
    store = new RunStore({ workspace: ws });
    const afterRestart = await store.commit(RUN, 'k3', cmd);
    expect(afterRestart).toEqual(again);
    // An older key returns the state as it was right after that command.
    const old = await store.commit(RUN, 'start', startCommand(RUN, ws));
    expect(old.ok && old.duplicate && old.state.seq).toBe(JSON.parse(ledgerLines(ws)[0]!).seq);
    expect(ledgerLines(ws)).toHaveLength(lines);
  });

  it('a key reused for another kind of command is a conflict', async () => {
    const state = await driveRun(store, ws, 1);
    expect(await codeOf(store.commit(RUN, 'k1', nextCommand(state, 2)))).toBe('CONFLICT');
  });

  it('a rejection appends nothing and leaves run.json alone', async () => {
    await driveRun(store, ws, 1);
    const before = fs.readFileSync(runFiles(ws).runJson, 'utf8');
    const lines = ledgerLines(ws);
    const r = await store.commit(RUN, 'bad', {
      type: 'revert',
      at: AT,
      actor: { id: 'cli:alice' },
      toStepId: 'review',
      source: 'command',
    });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.rejection.code).toBe('ILLEGAL_TRANSITION');
    expect(r.state?.seq).toBe(JSON.parse(before).seq);
    expect(ledgerLines(ws)).toEqual(lines);
    expect(fs.readFileSync(runFiles(ws).runJson, 'utf8')).toBe(before);
  });

  it('replaying the ledger gives the committed state and run.json', async () => {
    const state = await driveRun(store, ws, 40);
    expect(replayLedger(ws)).toEqual(state);
    expect(readRunJsonFile(ws)).toEqual(summaryOf(state));
    expect(ledgerLines(ws)).toHaveLength(41);
  });

  it('a command for an unknown run is rejected without creating anything', async () => {
    const r = await store.commit(RUN, 'x', nextCommand(await fakeState(), 1));
    expect(r).toMatchObject({ ok: false, rejection: { code: 'NOT_FOUND' }, state: null });
    expect(fs.existsSync(path.join(ws, '.phasebridge'))).toBe(false);
    expect(await codeOf(store.load(RUN))).toBe('NOT_FOUND');
    const badStart = { ...startCommand(RUN, ws), workflow: { id: 'x', version: '0', steps: [] } };
    expect(await store.commit(RUN, 's', badStart)).toMatchObject({ ok: false, state: null });
    expect(fs.existsSync(path.join(ws, '.phasebridge'))).toBe(false);
  });

  it('refuses malformed run ids (no path traversal), mismatched start commands and empty keys', async () => {
    const start = startCommand(RUN, ws);
    expect(await codeOf(store.commit('../../etc', 'k', start))).toBe('INVALID_INPUT');
    expect(await codeOf(store.load('2026-11-29T143000Z-../x'))).toBe('INVALID_INPUT');
    expect(await codeOf(store.commit(RUN, '', start))).toBe('INVALID_INPUT');
    const other = '2026-11-29T143000Z-other';
    expect(await codeOf(store.commit(other, 'k', start))).toBe('INVALID_INPUT');
    const elsewhere = { ...start, workspace: path.join(ws, 'sub') };
    expect(await codeOf(store.commit(RUN, 'k', elsewhere))).toBe('INVALID_INPUT');
  });

  it('refuses to write through a symlinked runs folder', async () => {
    const real = path.join(ws, 'real-runs');
    fs.mkdirSync(real);
    fs.mkdirSync(path.join(ws, '.phasebridge'));
    fs.symlinkSync(real, path.join(ws, '.phasebridge', 'runs'));
    expect(await codeOf(store.commit(RUN, 'start', startCommand(RUN, ws)))).toBe('CORRUPT_STATE');
    expect(fs.readdirSync(real)).toEqual([]);
  });

  it('lists only well-formed run folders that have a ledger', async () => {
    await driveRun(store, ws, 0);
    await driveRun(store, ws, 0, '2026-11-28T100000Z-older');
    fs.mkdirSync(path.join(ws, '.phasebridge', 'runs', 'not-a-run'));
    expect(await store.list()).toEqual(['2026-11-28T100000Z-older', RUN]);
  });
});

describe('RunStore layouts', () => {
  it('projects extra layouts that apply, with the new events, before run.json', async () => {
    const calls: {
      seq: number;
      events: string[];
      runJsonSeq: number | null;
      prev: number | null;
    }[] = [];
    const recorder: LayoutProjection = {
      name: 'native',
      appliesTo: () => true,
      async project(state, ctx: ProjectionContext) {
        const runJson = path.join(ctx.runDir, 'run.json');
        calls.push({
          seq: state.seq,
          events: ctx.events.map((e) => e.type),
          runJsonSeq: fs.existsSync(runJson)
            ? JSON.parse(fs.readFileSync(runJson, 'utf8')).seq
            : null,
          prev: ctx.previous?.seq ?? null,
        });
      },
    };
    const renamed = { ...recorder, name: 'recorder' };
    const skipped: LayoutProjection = {
      name: 'codemachine',
      async project() {
        throw new Error('must not run for a native run');
      },
    };
    await store.close();
    store = new RunStore({ workspace: ws, layouts: [renamed, skipped] });
    await driveRun(store, ws, 1);
    expect(calls).toEqual([
      { seq: 2, events: ['runStarted', 'stepQueued'], runJsonSeq: null, prev: null },
      { seq: 3, events: ['stepStarted'], runJsonSeq: 2, prev: 2 },
    ]);
  });

  it('a projection failing after the append is a warning of the commit; the next one catches up', async () => {
    let failing = false;
    const flaky: LayoutProjection = {
      name: 'flaky',
      appliesTo: () => true,
      async project() {
        if (failing) throw new Error('disk full');
      },
    };
    await store.close();
    store = new RunStore({ workspace: ws, layouts: [flaky] });
    const state = await driveRun(store, ws, 1);
    failing = true;
    const cmd = nextCommand(state, 2);
    const committed = await store.commit(RUN, 'k2', cmd);
    expect(committed).toMatchObject({ ok: true, duplicate: false });
    expect(committed.ok && committed.warnings).toEqual([
      expect.stringMatching(/^the flaky projection failed \(disk full\); the ledger has the run/),
    ]);
    expect(ledgerLines(ws)).toHaveLength(3);
    // run.json marks what every layout has seen: it stays behind while one fails.
    expect(readRunJsonFile(ws).seq).toBe(state.seq);
    const next = committed.ok ? committed.state : state;
    const still = await store.commit(RUN, 'k3', nextCommand(next, 3));
    expect(still.ok && still.warnings).toHaveLength(1);
    failing = false;
    const retried = await store.commit(RUN, 'k3', nextCommand(next, 3));
    expect(retried).toMatchObject({ ok: true, duplicate: true });
    expect(retried.ok && retried.warnings).toBeUndefined();
    expect(readRunJsonFile(ws)).toEqual(summaryOf(still.ok ? still.state : null));
    // Loading a run whose projection keeps failing still gives the ledger's state.
    failing = true;
    await store.close();
    store = new RunStore({ workspace: ws, layouts: [flaky] });
    fs.rmSync(runFiles(ws).runJson);
    const loaded = await store.load(RUN);
    expect(loaded.state).toEqual(replayLedger(ws));
    expect(loaded.warnings.at(-1)).toMatch(/the flaky projection failed \(disk full\)/);
  });

  it('an old duplicate key returns the state right after it, also past a snapshot', async () => {
    const states = [await driveRun(store, ws, 0)];
    for (let n = 1; n <= 300; n++) {
      const r = await store.commit(RUN, `k${n}`, nextCommand(states.at(-1)!, n));
      if (!r.ok) throw new Error(r.rejection.message);
      states.push(r.state);
    }
    for (const restart of [false, true]) {
      if (restart) await reopen();
      for (const n of [1, 255, 256, 257, 299]) {
        const again = await store.commit(RUN, `k${n}`, nextCommand(states[n - 1]!, n));
        expect(again.ok && again.duplicate && again.state).toEqual(states[n]);
      }
    }
  });
});

async function reopen(): Promise<RunStore> {
  await store.close();
  store = new RunStore({ workspace: ws });
  return store;
}

async function fakeState() {
  const other = new RunStore({ workspace: tempWorkspace() });
  const r = await other.commit(RUN, 's', startCommand(RUN, other.workspace));
  await other.close();
  fs.rmSync(other.workspace, { recursive: true, force: true });
  if (!r.ok) throw new Error('start failed');
  return r.state;
}
