import fs from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RunFollower } from '../../../src/engine/store/run-follower.ts';
import { RunStore } from '../../../src/engine/store/run-store.ts';
import { nextCommand } from './fixtures/demo-run.ts';
import {
  driveRun,
  ledgerLines,
  RUN,
  replayLedger,
  runFiles,
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

describe('RunFollower', () => {
  it('folds only the lines added since the last poll, waits on a half line, restarts after a cut', async () => {
    const follower = new RunFollower(runFiles(ws).ledger);
    expect(follower.poll()).toBeNull();
    let state = await driveRun(store, ws, 3);
    expect(follower.poll()).toEqual(state);
    const r = await store.commit(RUN, 'k4', nextCommand(state, 4));
    state = r.ok ? r.state : state;
    expect(follower.poll()).toEqual(state);
    const lines = ledgerLines(ws);
    await store.close();
    // An append in progress (no newline yet) is not read until it is whole.
    fs.appendFileSync(runFiles(ws).ledger, '{"v":1,"seq":');
    expect(follower.poll()).toEqual(state);
    // A repair cuts the ledger back: the follower reads it again from the start.
    fs.writeFileSync(runFiles(ws).ledger, `${lines.slice(0, 2).join('\n')}\n`);
    store = new RunStore({ workspace: ws });
    expect(follower.poll()).toEqual(replayLedger(ws));
    expect(follower.poll()?.seq).toBe(JSON.parse(lines[1]!).seq);
  });
});
