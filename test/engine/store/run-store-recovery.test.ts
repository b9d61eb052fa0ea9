import fs from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunEvent } from '../../../src/engine/events.ts';
import { replay } from '../../../src/engine/evolve.ts';
import { RunStore } from '../../../src/engine/store/run-store.ts';
import { nextCommand } from './fixtures/demo-run.ts';
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

/** The state the given ledger lines replay to. */
function replayLedgerPrefix(lines: string[]) {
  return replay(lines.flatMap((l) => (JSON.parse(l) as { events: RunEvent[] }).events));
}

/** Closes the store and opens a fresh one, as a process restart would. */
async function restart(): Promise<RunStore> {
  await store.close();
  store = new RunStore({ workspace: ws });
  return store;
}

describe('RunStore loading and recovery', () => {
  it('re-projects when run.json is behind the ledger', async () => {
    const files = runFiles(ws);
    await driveRun(store, ws, 3);
    const stale = fs.readFileSync(files.runJson, 'utf8');
    const state = await driveRun(store, ws, 6);
    fs.writeFileSync(files.runJson, stale);
    const loaded = await (await restart()).load(RUN);
    expect(loaded.warnings).toEqual([expect.stringMatching(/run.json was behind the ledger/)]);
    expect(loaded.state).toEqual(state);
    expect(readRunJsonFile(ws)).toEqual(summaryOf(state));
  });

  it.each([
    ['corrupt', '{"id": "trunc'],
    ['not a state', '{"hello": 1}'],
    ['missing', null],
  ])('rebuilds a %s run.json from the ledger', async (_name, content) => {
    const files = runFiles(ws);
    const state = await driveRun(store, ws, 5);
    await store.close();
    if (content === null) fs.rmSync(files.runJson);
    else fs.writeFileSync(files.runJson, content);
    const loaded = await (await restart()).load(RUN);
    expect(loaded.warnings).toEqual([expect.stringMatching(/rebuilt from the ledger/)]);
    expect(loaded.state).toEqual(state);
    expect(readRunJsonFile(ws)).toEqual(summaryOf(state));
  });

  it('skips and reports a torn last ledger line, then truncates it before the next append', async () => {
    const files = runFiles(ws);
    const state = await driveRun(store, ws, 4);
    await store.close();
    fs.appendFileSync(files.ledger, '{"v":1,"seq":99,"key":"k5","at":"20');
    const loaded = await (await restart()).load(RUN);
    expect(loaded.corrupt).toBeNull();
    expect(loaded.warnings).toEqual([expect.stringMatching(/ledger line 6 was torn by a crash/)]);
    expect(loaded.state).toEqual(state);
    const r = await store.commit(RUN, 'k5', nextCommand(state, 5));
    expect(r.ok && !r.duplicate).toBe(true);
    const lines = ledgerLines(ws);
    expect(lines).toHaveLength(6);
    for (const line of lines) JSON.parse(line);
    expect(replayLedger(ws)).toEqual(r.ok ? r.state : null);
  });

  it('blocks a run whose ledger has a corrupt middle line; nothing is reset or written', async () => {
    const files = runFiles(ws);
    const state = await driveRun(store, ws, 6);
    await store.close();
    const lines = ledgerLines(ws);
    lines[3] = lines[3]!.replace('"v":1', '"v":1,,');
    fs.writeFileSync(files.ledger, `${lines.join('\n')}\n`);
    const ledgerBefore = fs.readFileSync(files.ledger, 'utf8');
    const runJsonBefore = fs.readFileSync(files.runJson, 'utf8');

    const loaded = await (await restart()).load(RUN);
    expect(loaded.corrupt).toMatchObject({ line: 4, repairable: true });
    expect(loaded.state.status).toBe('blocked');
    expect(loaded.state.blocked).toEqual({
      kind: 'corrupt',
      reason: expect.stringMatching(/^ledger line 4 is corrupt: not valid JSON/),
    });
    // The ledger's good prefix is shown (what a repair keeps), never a projection's view.
    expect(loaded.state).toEqual({
      ...replayLedgerPrefix(lines.slice(0, 3)),
      status: 'blocked',
      blocked: loaded.state.blocked,
    });
    await expect(store.commit(RUN, 'k7', nextCommand(state, 7))).rejects.toMatchObject({
      code: 'CORRUPT_STATE',
    });
    expect(fs.readFileSync(files.ledger, 'utf8')).toBe(ledgerBefore);
    expect(fs.readFileSync(files.runJson, 'utf8')).toBe(runJsonBefore);

    // Only an explicit repair moves on: backup kept, good prefix replayed, projections rebuilt.
    const repaired = await store.repair(RUN);
    expect(repaired).toMatchObject({ repaired: true, refused: null, kept: 3, lines: 7 });
    expect(repaired.dropped.map((d) => d.line)).toEqual([4, 5, 6, 7]);
    expect(repaired.warnings).toEqual([]);
    expect(ledgerLines(ws)).toEqual(lines.slice(0, 3));
    const backups = fs.readdirSync(files.dir).filter((f) => f.startsWith('ledger.jsonl.corrupt-'));
    expect(backups).toHaveLength(1);
    expect(fs.readFileSync(`${files.dir}/${backups[0]}`, 'utf8')).toBe(ledgerBefore);
    expect(readRunJsonFile(ws)).toEqual(summaryOf(repaired.state));
    expect(replayLedger(ws)).toEqual(repaired.state);
    expect((await store.load(RUN)).corrupt).toBeNull();
    const next = await store.commit(RUN, 'after-repair', nextCommand(repaired.state!, 3));
    expect(next.ok).toBe(true);
  });

  it('blocks a run whose run.json is ahead of its ledger (ledger lines lost)', async () => {
    const files = runFiles(ws);
    const state = await driveRun(store, ws, 5);
    await store.close();
    const lines = ledgerLines(ws);
    fs.writeFileSync(files.ledger, `${lines.slice(0, 3).join('\n')}\n`);
    const loaded = await (await restart()).load(RUN);
    expect(loaded.corrupt?.reason).toMatch(/run.json is at seq \d+ but the ledger ends at seq/);
    expect(loaded.state.seq).toBeLessThan(state.seq);
    expect(loaded.state.status).toBe('blocked');
    expect(loaded.state.blocked?.kind).toBe('corrupt');
  });

  it('blocks on a line whose seq does not match the replay', async () => {
    const files = runFiles(ws);
    await driveRun(store, ws, 3);
    await store.close();
    const lines = ledgerLines(ws);
    const entry = JSON.parse(lines[1]!);
    entry.seq += 1;
    lines[1] = JSON.stringify(entry);
    fs.writeFileSync(files.ledger, `${lines.join('\n')}\n`);
    const loaded = await (await restart()).load(RUN);
    expect(loaded.corrupt).toMatchObject({ line: 2 });
    expect(loaded.corrupt?.reason).toMatch(/says seq .* but replay gives/);
  });

  it('a re-projection that fails on load is reported, and retried by the next commit', async () => {
    const files = runFiles(ws);
    const state = await driveRun(store, ws, 2);
    await store.close();
    fs.rmSync(files.runJson);
    let broken = true;
    const layout = {
      name: 'extra',
      appliesTo: () => true,
      async project() {
        if (broken) throw new Error('extra layout is broken');
      },
    };
    store = new RunStore({ workspace: ws, layouts: [layout] });
    const loaded = await store.load(RUN);
    expect(loaded.warnings).toEqual([
      expect.stringMatching(/run.json was missing/),
      expect.stringMatching(/the extra projection failed \(extra layout is broken\)/),
    ]);
    expect(fs.existsSync(files.runJson)).toBe(false);
    broken = false;
    const r = await store.commit(RUN, 'k3', nextCommand(state, 3));
    expect(readRunJsonFile(ws)).toEqual(summaryOf(r.ok ? r.state : null));
  });

  it('recover() loads every run and reports what it repaired', async () => {
    await driveRun(store, ws, 2);
    await driveRun(store, ws, 2, '2026-11-28T100000Z-older');
    await store.close();
    fs.rmSync(runFiles(ws).runJson);
    const report = await (await restart()).recover();
    expect(report.map((r) => [r.runId, r.result.ok])).toEqual([
      ['2026-11-28T100000Z-older', true],
      [RUN, true],
    ]);
    const mine = report[1]!.result;
    expect(mine.ok && mine.run.warnings).toEqual([expect.stringMatching(/run.json was missing/)]);
  });

  it('peek and load take the state from the ledger, never from a hand-edited run.json', async () => {
    const files = runFiles(ws);
    const state = await driveRun(store, ws, 4);
    await store.close();
    const edited = { ...readRunJsonFile(ws), status: 'completed', outcome: { reason: 'done' } };
    fs.writeFileSync(files.runJson, JSON.stringify(edited, null, 2));
    const reader = new RunStore({ workspace: ws });
    expect((await reader.peek(RUN)).state).toEqual(state);
    await reader.close();
    const loaded = await (await restart()).load(RUN);
    expect(loaded.state).toEqual(state);
    expect(loaded.warnings).toEqual([expect.stringMatching(/run.json differed .*; rewritten/)]);
    expect(readRunJsonFile(ws)).toEqual(summaryOf(state));
  });

  it('peek reads without locking or repairing', async () => {
    const files = runFiles(ws);
    const state = await driveRun(store, ws, 2);
    await store.close();
    fs.rmSync(files.runJson);
    const reader = new RunStore({ workspace: ws });
    const peeked = await reader.peek(RUN);
    expect(peeked.state).toEqual(state);
    expect(fs.existsSync(files.runJson)).toBe(false);
    expect(fs.existsSync(`${files.dir}/lock`)).toBe(false);
    await reader.close();
  });
});
