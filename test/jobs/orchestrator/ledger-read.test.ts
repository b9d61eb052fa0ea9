/**
 * The change feed's ledger reads (issue 30: ledgers read on from the last known offset, never
 * whole): after a commit by another writer only the appended bytes are read, and the state is
 * the one a whole replay gives; a file renamed in, cut back or rewritten in place is read whole.
 */
import fs from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readLedger } from '../../../src/engine/ledger/ledger-file.ts';
import { RunStore } from '../../../src/engine/store/run-store.ts';
import { LedgerTails } from '../../../src/jobs/orchestrator/ledger-read.ts';
import { nextCommand } from '../../engine/store/fixtures/demo-run.ts';
import {
  driveRun,
  ledgerLines,
  RUN,
  replayLedger,
  runFiles,
  tempWorkspace,
} from '../../engine/store/fixtures/workspace.ts';

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

async function commitMore(from: number, count: number): Promise<void> {
  let state = (await store.load(RUN)).state;
  for (let n = from; n < from + count; n++) {
    const r = await store.commit(RUN, `more${n}`, nextCommand(state, n));
    if (!r.ok) throw new Error(r.rejection.message);
    state = r.state;
  }
}

describe('ledger reads for the change feed', () => {
  it('after commits by another writer, gives the state and new entries a whole replay gives', async () => {
    await driveRun(store, ws, 120);
    const long = replayLedger(ws)!;
    const tails = new LedgerTails();
    const first = tails.read(store, RUN, long.seq);
    expect(first.state).toEqual(long);

    await commitMore(1000, 2);

    const second = tails.read(store, RUN, long.seq);
    expect(second.state).toEqual(replayLedger(ws));
    // Complete above `since`: the two new entries are there.
    expect(second.entries.filter((e) => e.seq > long.seq).map((e) => e.key)).toEqual([
      'more1000',
      'more1001',
    ]);
  });

  it('the resumed read itself costs the appended bytes only', async () => {
    await driveRun(store, ws, 120);
    const { ledger } = runFiles(ws);
    const first = readLedger(ledger);
    expect(first.readBytes).toBe(fs.statSync(ledger).size);
    const before = fs.statSync(ledger).size;
    await commitMore(2000, 1);
    const next = readLedger(ledger, undefined, first.resume);
    expect(next.resumed).toBe(true);
    expect(next.readBytes).toBe(fs.statSync(ledger).size - before);
    expect(next.entries.map((e) => e.key)).toEqual(['more2000']);
  });

  it('a gap older than the entries kept is filled by a whole read', async () => {
    await driveRun(store, ws, 100);
    const tails = new LedgerTails();
    tails.read(store, RUN, 0);
    await commitMore(3000, 1);
    const all = tails.read(store, RUN, 1);
    // Every line after seq 1, more than the 64 a resumed read keeps.
    const lines = ledgerLines(ws).map((l) => JSON.parse(l) as { seq: number });
    expect(all.entries.filter((e) => e.seq > 1)).toHaveLength(
      lines.filter((l) => l.seq > 1).length,
    );
    expect(all.entries.length).toBeGreaterThan(64);
    expect(all.state).toEqual(replayLedger(ws));
  });

  it('a ledger renamed in (a repair), cut back or rewritten in place is read whole', async () => {
    await driveRun(store, ws, 10);
    const { ledger } = runFiles(ws);
    const resume = readLedger(ledger).resume!;
    const text = fs.readFileSync(ledger, 'utf8');

    // Renamed in: another inode.
    fs.writeFileSync(`${ledger}.new`, text);
    fs.renameSync(`${ledger}.new`, ledger);
    expect(readLedger(ledger, undefined, resume)).toMatchObject({ resumed: false });

    // Cut back in place: shorter than the offset.
    const lines = text.split('\n').filter((l) => l !== '');
    const cut = readLedger(ledger).resume!;
    fs.truncateSync(ledger, Buffer.byteLength(`${lines.slice(0, 5).join('\n')}\n`));
    const afterCut = readLedger(ledger, undefined, cut);
    expect(afterCut.resumed).toBe(false);
    expect(afterCut.entries).toHaveLength(5);

    // Rewritten in place to the same length or more: the guard bytes differ.
    fs.writeFileSync(ledger, text);
    const whole = readLedger(ledger).resume!;
    const fd = fs.openSync(ledger, 'r+');
    fs.writeSync(fd, Buffer.from('X'), 0, 1, whole.offset - 10);
    fs.closeSync(fd);
    expect(readLedger(ledger, undefined, whole)).toMatchObject({ resumed: false });
  });
});
