/**
 * A run folder with no ledger line is not a run (issue 39: a kill between the folder's creation
 * and the run's first line): it is not listed, and once older than the grace period and holding
 * only what we put there, it is removed. A folder with anything foreign in it, a symlink, a fresh
 * folder, a live holder's lock and a real run are all left as they are. Real folders on disk.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { currentLockIdentity } from '../../../src/engine/ledger/run-lock.ts';
import { NEVER_STARTED_GRACE_MS } from '../../../src/engine/store/never-started.ts';
import { RunStore } from '../../../src/engine/store/run-store.ts';
import { startCommand } from './fixtures/demo-run.ts';
import { RUN, tempWorkspace } from './fixtures/workspace.ts';

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

const runs = () => path.join(ws, '.phasebridge', 'runs');
const HOUR_AGO = (Date.now() - 60 * 60 * 1000) / 1000;
/** A pid no process can have (above Linux's largest pid_max, 2^22). */
const deadPid = (): number => 2 ** 22 + 1;

/** What a start killed before its first line leaves: the folder, its lock, an empty ledger. */
function leftover(id: string, opts: { lockPid?: number; old?: boolean } = {}): string {
  const dir = path.join(runs(), id);
  fs.mkdirSync(path.join(dir, 'logs'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'ledger.jsonl'), '');
  const pid = opts.lockPid ?? deadPid();
  const start = pid === process.pid ? currentLockIdentity().start : null;
  const lock = { pid, start, token: 'ab'.repeat(8), at: new Date().toISOString() };
  fs.writeFileSync(path.join(dir, 'lock'), JSON.stringify(lock));
  fs.writeFileSync(path.join(dir, `.run.json.${deadPid()}.0123abcd.tmp`), '{"half');
  if (opts.old !== false) age(dir);
  return dir;
}

/** Makes `dir` and its entries an hour old. */
function age(dir: string): void {
  for (const name of fs.readdirSync(dir)) {
    fs.lutimesSync(path.join(dir, name), HOUR_AGO, HOUR_AGO);
  }
  fs.utimesSync(dir, HOUR_AGO, HOUR_AGO);
}

const ID = (n: number) => `2026-12-02T10000${n}Z-chaos-${n}`;

describe('run folders that never became runs', () => {
  it('are not listed, and are removed once past the grace period; a real run stays', async () => {
    const dir = leftover(ID(1));
    const r = await store.commit(RUN, 'start', startCommand(RUN, ws));
    expect(r.ok).toBe(true);
    // Listed or not, before any sweep: only the real run is a run.
    expect(await store.list()).toEqual([RUN]);
    expect(store.sweepNeverStarted()).toEqual([ID(1)]);
    expect(fs.existsSync(dir)).toBe(false);
    expect(await store.list()).toEqual([RUN]);
    expect(fs.readdirSync(runs())).toEqual([RUN]);
  });

  it('a folder younger than the grace period is left: its start may be in progress', () => {
    const dir = leftover(ID(2), { old: false });
    expect(store.sweepNeverStarted()).toEqual([]);
    expect(fs.existsSync(path.join(dir, 'ledger.jsonl'))).toBe(true);
    // The same folder, past the grace period.
    expect(store.sweepNeverStarted({ now: Date.now() + NEVER_STARTED_GRACE_MS + 1000 })).toEqual([
      ID(2),
    ]);
  });

  it('a folder with foreign content, or whose lock a live process holds, is left untouched', () => {
    const foreign = leftover(ID(3));
    fs.writeFileSync(path.join(foreign, 'notes.txt'), 'mine');
    age(foreign);
    const inLogs = leftover(ID(4));
    fs.writeFileSync(path.join(inLogs, 'logs', 'plan.log'), 'output');
    age(inLogs);
    const held = leftover(ID(5), { lockPid: process.pid });
    const before = [foreign, inLogs, held].map((d) => fs.readdirSync(d).sort());
    expect(store.sweepNeverStarted()).toEqual([]);
    expect([foreign, inLogs, held].map((d) => fs.readdirSync(d).sort())).toEqual(before);
  });

  it('symlinks are never followed: a linked run folder, a linked ledger', () => {
    const outside = fs.mkdtempSync(path.join(path.dirname(ws), 'pb-outside-'));
    try {
      fs.writeFileSync(path.join(outside, 'ledger.jsonl'), '');
      fs.mkdirSync(runs(), { recursive: true });
      fs.symlinkSync(outside, path.join(runs(), ID(6)));
      const linkedLedger = leftover(ID(7));
      fs.rmSync(path.join(linkedLedger, 'ledger.jsonl'));
      fs.symlinkSync(path.join(outside, 'ledger.jsonl'), path.join(linkedLedger, 'ledger.jsonl'));
      age(linkedLedger);
      expect(store.sweepNeverStarted()).toEqual([]);
      expect(fs.readdirSync(outside)).toEqual(['ledger.jsonl']);
      expect(fs.lstatSync(path.join(runs(), ID(6))).isSymbolicLink()).toBe(true);
      expect(fs.existsSync(path.join(linkedLedger, 'lock'))).toBe(true);
    } finally {
      fs.rmSync(outside, { recursive: true, force: true });
    }
  });
});
