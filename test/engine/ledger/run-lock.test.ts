import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  currentLockIdentity,
  RunLock,
  readLockOwner,
} from '../../../src/engine/ledger/run-lock.ts';
import { hasCode } from '../../../src/errors.ts';
import { exited, spawnHelper } from '../store/fixtures/spawn.ts';

const HOLD_LOCK = fileURLToPath(new URL('../store/fixtures/hold-lock.ts', import.meta.url));

let dir: string;
let file: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-lock-'));
  file = path.join(dir, 'lock');
});
afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

function conflictMessage(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    if (hasCode(err, 'CONFLICT')) return (err as Error).message;
    throw err;
  }
  throw new Error('expected a ConflictError');
}

describe('RunLock', () => {
  it('writes the pid, refuses a second holder in this process, and is removed on release', () => {
    const lock = RunLock.acquire(file, 'r1');
    expect(readLockOwner(file)).toMatchObject({ pid: process.pid, token: lock.owner.token });
    expect(conflictMessage(() => RunLock.acquire(file, 'r1'))).toBe(
      `run r1 is locked by pid ${process.pid} (this process)`,
    );
    lock.release();
    expect(fs.existsSync(file)).toBe(false);
    RunLock.acquire(file, 'r1').release();
    expect(fs.readdirSync(dir)).toEqual([]);
  });

  it('refuses while another live process holds it, and takes it over once that process is dead', async () => {
    const holder = await spawnHelper(HOLD_LOCK, [file]);
    try {
      expect(holder.firstLine).toBe('locked');
      const pid = holder.child.pid;
      expect(conflictMessage(() => RunLock.acquire(file, 'r2'))).toBe(
        `run r2 is locked by pid ${pid}`,
      );
      holder.child.kill('SIGKILL');
      await exited(holder.child);
      const lock = RunLock.acquire(file, 'r2');
      expect(readLockOwner(file)).toMatchObject({ pid: process.pid });
      lock.release();
    } finally {
      holder.child.kill('SIGKILL');
    }
  });

  it('a second process is refused while this one holds the lock', async () => {
    const lock = RunLock.acquire(file, 'test-run');
    const other = await spawnHelper(HOLD_LOCK, [file]);
    expect(other.firstLine).toBe(`CONFLICT: run test-run is locked by pid ${process.pid}`);
    expect(await exited(other.child)).toBe(3);
    lock.release();
  });

  it('takes over a lock left by an earlier process that had our pid (pid reuse)', () => {
    const me = currentLockIdentity();
    if (me.start === null) return; // no /proc: start times are unknown on this platform
    fs.writeFileSync(
      file,
      JSON.stringify({ pid: me.pid, start: me.start - 1, token: 'old', at: '' }),
    );
    const lock = RunLock.acquire(file, 'r3');
    expect(readLockOwner(file)).toMatchObject({ token: lock.owner.token });
    lock.release();
  });

  it('takes over an unreadable lock file', () => {
    fs.writeFileSync(file, 'garbage');
    const lock = RunLock.acquire(file, 'r4');
    expect(readLockOwner(file)).toMatchObject({ pid: process.pid });
    lock.release();
  });

  it('release never removes a lock someone else took over', () => {
    const lock = RunLock.acquire(file, 'r5');
    fs.writeFileSync(file, JSON.stringify({ pid: 1, start: null, token: 'theirs', at: '' }));
    lock.release();
    expect(readLockOwner(file)).toMatchObject({ token: 'theirs' });
  });
});
