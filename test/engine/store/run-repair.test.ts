/**
 * RunStore.repair as `phasebridge repair` uses it, and commits whose projection fails: a garbled
 * or gapped ledger, run.json ahead of the ledger, nothing to keep, a garbage registry.db.
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CodemachineLayout } from '../../../src/engine/layouts/codemachine/index.ts';
import type { RunState } from '../../../src/engine/model.ts';
import { RunStore } from '../../../src/engine/store/run-store.ts';
import { nextCommand, startCommand } from './fixtures/demo-run.ts';
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
let layout: CodemachineLayout;
const clock = () => new Date('2026-12-01T10:00:00.000Z');
beforeEach(() => {
  ws = tempWorkspace();
  layout = new CodemachineLayout();
  store = new RunStore({ workspace: ws, layouts: [layout], clock });
});
afterEach(async () => {
  await store.close();
  layout.close();
  fs.rmSync(ws, { recursive: true, force: true });
});

/** Every file of the workspace with its bytes, to show a dry run changes nothing. */
function snapshot(dir = ws): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of fs.readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!f.isFile()) continue;
    const p = path.join(f.parentPath, f.name);
    out[path.relative(dir, p)] = fs.readFileSync(p).toString('base64');
  }
  return out;
}

/** Rewrites the ledger as the given lines. */
function writeLedger(lines: string[]): void {
  fs.writeFileSync(runFiles(ws).ledger, `${lines.join('\n')}\n`);
}

async function codemachineRun(count: number): Promise<RunState> {
  const start = { ...startCommand(RUN, ws), layout: 'codemachine' as const };
  const r = await store.commit(RUN, 'start', start);
  if (!r.ok) throw new Error(r.rejection.message);
  let state = r.state;
  for (let n = 1; n <= count; n++) {
    const c = await store.commit(RUN, `k${n}`, nextCommand(state, n));
    if (!c.ok) throw new Error(c.rejection.message);
    state = c.state;
  }
  return state;
}

const registryRows = () => {
  const db = new Database(path.join(ws, '.codemachine', 'logs', 'registry.db'), {
    readonly: true,
  });
  try {
    return db.prepare('SELECT step_id, status FROM agent_runs ORDER BY id').all();
  } finally {
    db.close();
  }
};

describe('RunStore.repair', () => {
  it('leaves a healthy run alone: nothing to repair', async () => {
    const state = await driveRun(store, ws, 5);
    await store.release(RUN);
    const before = snapshot();
    const report = await store.repair(RUN);
    expect(report).toMatchObject({ problems: [], repaired: false, refused: null, kept: 6 });
    expect(report.state).toEqual(state);
    expect(snapshot()).toEqual({
      ...before,
      [path.relative(ws, `${runFiles(ws).dir}/lock`)]: expect.any(String),
    });
  });

  it('a garbled line: the dry run only tells; the repair backs up, keeps the prefix, rebuilds', async () => {
    await driveRun(store, ws, 6);
    await store.release(RUN);
    const lines = ledgerLines(ws);
    lines[3] = lines[3]!.replace('"v":1', '"v":1,,');
    writeLedger(lines);
    const before = snapshot();

    const dry = await store.repair(RUN, { dryRun: true });
    expect(dry.problems).toEqual([
      expect.stringMatching(/^ledger line 4 is corrupt: not valid JSON/),
    ]);
    expect(dry).toMatchObject({ repaired: false, refused: null, kept: 3, lines: 7 });
    const held = lines.slice(3).map((l, i) => ({
      line: 4 + i,
      command: expect.any(String),
      key: `k${3 + i}`,
      ...(i === 0 ? {} : { seq: JSON.parse(l).seq }),
    }));
    expect(dry.dropped).toEqual(held);
    expect(dry.backups.map((b) => path.basename(b))).toEqual([
      'ledger.jsonl.corrupt-2026-12-01T100000000Z',
      'run.json.corrupt-2026-12-01T100000000Z',
    ]);
    expect(snapshot()).toEqual(before);

    const done = await store.repair(RUN);
    expect(done).toMatchObject({ repaired: true, kept: 3, lines: 7, dropped: held, warnings: [] });
    expect(ledgerLines(ws)).toEqual(lines.slice(0, 3));
    expect(fs.readFileSync(done.backups[0]!, 'utf8')).toBe(`${lines.join('\n')}\n`);
    expect(done.state).toEqual(replayLedger(ws));
    expect(readRunJsonFile(ws)).toEqual(summaryOf(done.state));
    const again = await store.repair(RUN);
    expect(again).toMatchObject({ problems: [], repaired: false });
  });

  it('a seq gap (a line lost in the middle) ends the valid prefix', async () => {
    await driveRun(store, ws, 6);
    await store.release(RUN);
    const lines = ledgerLines(ws);
    writeLedger([...lines.slice(0, 4), ...lines.slice(5)]);
    const report = await store.repair(RUN);
    expect(report.problems).toEqual([
      expect.stringMatching(/^ledger line 5 says seq \d+ but replay gives \d+/),
    ]);
    expect(report).toMatchObject({ repaired: true, kept: 4, lines: 6 });
    expect(report.dropped.map((d) => d.key)).toEqual(['k5', 'k6']);
    expect(ledgerLines(ws)).toEqual(lines.slice(0, 4));
  });

  it('run.json ahead of the ledger: every line is kept, run.json is backed up and rewritten', async () => {
    await driveRun(store, ws, 6);
    await store.release(RUN);
    const lines = ledgerLines(ws);
    writeLedger(lines.slice(0, 5));
    const ahead = fs.readFileSync(runFiles(ws).runJson, 'utf8');
    const report = await store.repair(RUN);
    expect(report.problems).toEqual([
      expect.stringMatching(
        /^run.json is at seq \d+ but the ledger ends at seq \d+: ledger lines are missing/,
      ),
    ]);
    expect(report).toMatchObject({ repaired: true, kept: 5, lines: 5, dropped: [] });
    expect(report.backups.map((b) => path.basename(b))).toEqual([
      'run.json.corrupt-2026-12-01T100000000Z',
    ]);
    expect(fs.readFileSync(report.backups[0]!, 'utf8')).toBe(ahead);
    expect(readRunJsonFile(ws).seq).toBe(replayLedger(ws)?.seq);
  });

  it('refuses when no line is valid, and changes nothing; status views say why', async () => {
    await driveRun(store, ws, 2);
    await store.release(RUN);
    const lines = ledgerLines(ws);
    writeLedger(['garbage', ...lines.slice(1)]);
    const before = snapshot();
    const report = await store.repair(RUN);
    expect(report.refused).toMatch(/^no valid ledger line to keep \(ledger line 1 is corrupt/);
    expect(report.repaired).toBe(false);
    await store.release(RUN);
    expect(snapshot()).toEqual(before);
    await expect(new RunStore({ workspace: ws }).peek(RUN)).rejects.toMatchObject({
      code: 'CORRUPT_STATE',
      message: expect.stringMatching(/repair .* --dry-run/),
    });
  });

  it('a ledger naming another workspace is refused, never projected there', async () => {
    const other = tempWorkspace();
    try {
      await driveRun(store, ws, 1);
      await store.release(RUN);
      const lines = ledgerLines(ws).map((l) =>
        l.replaceAll(JSON.stringify(ws), JSON.stringify(other)),
      );
      writeLedger(lines);
      await expect(store.load(RUN)).rejects.toMatchObject({
        code: 'CORRUPT_STATE',
        message: expect.stringMatching(/ledger line 1 starts the run in workspace .*, not /),
      });
      expect((await store.repair(RUN)).refused).not.toBeNull();
      expect(fs.readdirSync(other)).toEqual([]);
    } finally {
      fs.rmSync(other, { recursive: true, force: true });
    }
  });
});

describe('a projection failing after the append (garbage registry.db)', () => {
  it('commits with a warning; loading still works; removing the file re-projects it whole', async () => {
    await codemachineRun(2);
    const db = path.join(ws, '.codemachine', 'logs', 'registry.db');
    expect(registryRows()).toHaveLength(1);
    await store.close();
    layout.close();
    for (const f of [db, `${db}-wal`, `${db}-shm`]) fs.rmSync(f, { force: true });
    fs.writeFileSync(db, 'this is not a database, just some text '.repeat(200));
    layout = new CodemachineLayout();
    store = new RunStore({ workspace: ws, layouts: [layout], clock });

    const loaded = await store.load(RUN);
    expect(loaded.corrupt).toBeNull();
    let state = loaded.state;
    for (let n = 3; n <= 5; n++) {
      const r = await store.commit(RUN, `k${n}`, nextCommand(state, n));
      expect(r.ok && r.warnings).toEqual([
        expect.stringMatching(/^the codemachine projection failed \(file is not a database\)/),
      ]);
      if (r.ok) state = r.state;
    }
    expect(replayLedger(ws)).toEqual(state);
    // After a restart the run loads from the ledger, with the failure reported, not thrown.
    await store.close();
    store = new RunStore({ workspace: ws, layouts: [layout], clock });
    const again = await store.load(RUN);
    expect(again.state).toEqual(state);
    expect(again.warnings.join('\n')).toMatch(/codemachine projection failed/);
    expect(readRunJsonFile(ws).seq).toBeLessThan(state.seq);

    fs.rmSync(db);
    const r = await store.commit(RUN, 'k6', nextCommand(state, 6));
    expect(r.ok && r.warnings).toBeUndefined();
    if (r.ok) state = r.state;
    // Rebuilt from the whole history, not only from the commits since the failure.
    expect(registryRows().map((row) => (row as { step_id: string }).step_id)).toEqual(
      state.steps.filter((s) => s.attempt > 0).flatMap((s) => Array(s.attempt).fill(s.id)),
    );
    expect(readRunJsonFile(ws)).toEqual(summaryOf(state));
  });

  it('repair moves a garbage registry.db aside and rebuilds it', async () => {
    const state = await codemachineRun(4);
    await store.release(RUN);
    const db = path.join(ws, '.codemachine', 'logs', 'registry.db');
    const rows = registryRows();
    layout.close();
    for (const f of [db, `${db}-wal`, `${db}-shm`]) fs.rmSync(f, { force: true });
    fs.writeFileSync(db, Buffer.alloc(8192, 7));
    const dry = await store.repair(RUN, { dryRun: true });
    expect(dry.problems).toEqual([
      expect.stringMatching(
        /^\.codemachine\/logs\/registry\.db cannot be read \(file is not a database\)/,
      ),
    ]);
    const done = await store.repair(RUN);
    expect(done).toMatchObject({ repaired: true, kept: 5, dropped: [], warnings: [] });
    expect(done.backups.map((b) => path.basename(b))).toContain(
      'registry.db.corrupt-2026-12-01T100000000Z',
    );
    expect(registryRows()).toEqual(rows);
    expect(done.state).toEqual(state);
  });
});
