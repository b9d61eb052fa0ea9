import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sweepOwnTemps } from '../../../src/engine/ledger/temp-sweep.ts';
import { RunStore } from '../../../src/engine/store/run-store.ts';
import {
  driveRun,
  RUN,
  readRunJsonFile,
  runFiles,
  tempWorkspace,
} from '../store/fixtures/workspace.ts';

/** A pid no process has now: a child that ran and exited. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', '0']);
  return child.pid!;
}

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-sweep-'));
});
afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('sweepOwnTemps', () => {
  it("removes a dead writer's temp files of our naming only, never following a link", () => {
    const dead = deadPid();
    const outside = path.join(dir, 'outside.txt');
    fs.writeFileSync(outside, 'keep');
    const sub = path.join(dir, 'run');
    fs.mkdirSync(sub);
    const leftover = `.run.json.${dead}.0a1b2c3d.tmp`;
    const own = `.run.json.${process.pid}.deadbeef.tmp`;
    const link = `.ledger.jsonl.${dead}.01234567.tmp`;
    const folder = `.logs.${dead}.89abcdef.tmp`;
    const other = 'notes.tmp';
    fs.writeFileSync(path.join(sub, leftover), '{"torn');
    fs.writeFileSync(path.join(sub, own), 'in progress');
    fs.symlinkSync(outside, path.join(sub, link));
    fs.mkdirSync(path.join(sub, folder));
    fs.writeFileSync(path.join(sub, other), 'mine');
    expect(sweepOwnTemps(sub)).toEqual([leftover]);
    expect(fs.readdirSync(sub).sort()).toEqual([folder, link, own, other].sort());
    expect(fs.readFileSync(outside, 'utf8')).toBe('keep');
  });

  it("removes the run lock's temp file a kill left while taking the lock, once it is not a taker's", () => {
    const old = 'lock.0123456789abcdef.tmp';
    const fresh = 'lock.fedcba9876543210.tmp';
    fs.writeFileSync(path.join(dir, old), '{"pid":1}');
    fs.writeFileSync(path.join(dir, fresh), '{"pid":1}');
    // The sweep's clock a moment after `fresh` was written, `old` a minute before that.
    const now = fs.statSync(path.join(dir, fresh)).mtimeMs + 100;
    const minuteAgo = new Date(now - 60_000);
    fs.utimesSync(path.join(dir, old), minuteAgo, minuteAgo);
    // Just written: a process may be between writing it and linking it into place.
    expect(sweepOwnTemps(dir, now)).toEqual([old]);
    expect(fs.readdirSync(dir)).toEqual([fresh]);
  });

  it('takes a missing folder for an empty one', () => {
    expect(sweepOwnTemps(path.join(dir, 'nope'))).toEqual([]);
  });
});

describe('opening a run', () => {
  it('sweeps the temp files a killed commit left in its folder, and loads from the ledger', async () => {
    const ws = tempWorkspace();
    try {
      let store = new RunStore({ workspace: ws });
      const state = await driveRun(store, ws, 3);
      await store.close();
      const files = runFiles(ws);
      const runDir = path.dirname(files.runJson);
      const leftover = path.join(runDir, `.run.json.${deadPid()}.feedface.tmp`);
      fs.writeFileSync(leftover, '{"id":"not the state"');
      store = new RunStore({ workspace: ws });
      const loaded = await store.load(RUN);
      await store.close();
      expect(loaded.state).toEqual(state);
      expect(fs.existsSync(leftover)).toBe(false);
      expect(readRunJsonFile(ws)).toMatchObject({ seq: state.seq });
    } finally {
      fs.rmSync(ws, { recursive: true, force: true });
    }
  });
});
