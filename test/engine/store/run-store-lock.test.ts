import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RunStore } from '../../../src/engine/store/run-store.ts';
import { nextCommand } from './fixtures/demo-run.ts';
import { exited, spawnHelper } from './fixtures/spawn.ts';
import { driveRun, RUN, runFiles, tempWorkspace } from './fixtures/workspace.ts';

const HOLD_RUN = fileURLToPath(new URL('./fixtures/hold-run.ts', import.meta.url));

let ws: string;
beforeEach(() => {
  ws = tempWorkspace();
});
afterEach(() => {
  fs.rmSync(ws, { recursive: true, force: true });
});

describe('one writer per run', () => {
  it('a store in another process is refused while the first holds the run, until it closes', async () => {
    const store = new RunStore({ workspace: ws });
    await driveRun(store, ws, 1);
    const other = await spawnHelper(HOLD_RUN, [ws, RUN]);
    expect(other.firstLine).toBe(`CONFLICT: run ${RUN} is locked by pid ${process.pid}`);
    expect(await exited(other.child)).toBe(3);
    await store.release(RUN);
    const third = await spawnHelper(HOLD_RUN, [ws, RUN]);
    expect(third.firstLine).toBe('ready');
    third.child.stdin?.end();
    expect(await exited(third.child)).toBe(0);
    await store.close();
  });

  it('while another process holds the run this one is refused; once it dies its lock is taken over', async () => {
    const setup = new RunStore({ workspace: ws });
    const state = await driveRun(setup, ws, 1);
    await setup.close();
    const holder = await spawnHelper(HOLD_RUN, [ws, RUN]);
    const store = new RunStore({ workspace: ws });
    try {
      expect(holder.firstLine).toBe('ready');
      await expect(store.commit(RUN, 'k2', nextCommand(state, 2))).rejects.toThrow(
        `run ${RUN} is locked by pid ${holder.child.pid}`,
      );
      holder.child.kill('SIGKILL');
      await exited(holder.child);
      expect(fs.existsSync(`${runFiles(ws).dir}/lock`)).toBe(true); // left behind by the dead holder
      const r = await store.commit(RUN, 'k2', nextCommand(state, 2));
      expect(r.ok && !r.duplicate).toBe(true);
    } finally {
      holder.child.kill('SIGKILL');
      await store.close();
    }
    expect(fs.existsSync(`${runFiles(ws).dir}/lock`)).toBe(false);
  });

  it('two stores in one process cannot both hold a run', async () => {
    const a = new RunStore({ workspace: ws });
    await driveRun(a, ws, 0);
    const b = new RunStore({ workspace: ws });
    await expect(b.load(RUN)).rejects.toMatchObject({ code: 'CONFLICT' });
    await a.close();
    await expect(b.load(RUN)).resolves.toMatchObject({ corrupt: null });
    await b.close();
  });

  it('commits to one run from many callers at once are serialised', async () => {
    const store = new RunStore({ workspace: ws });
    const state = await driveRun(store, ws, 0);
    const cmd = nextCommand(state, 1);
    const results = await Promise.all(
      Array.from({ length: 5 }, () => store.commit(RUN, 'same-key', cmd)),
    );
    expect(results.filter((r) => r.ok && !r.duplicate)).toHaveLength(1);
    expect(results.filter((r) => r.ok && r.duplicate)).toHaveLength(4);
    await store.close();
  });
});
