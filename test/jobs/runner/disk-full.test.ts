/**
 * A full disk while an agent prints: the real runner, the demo agent and a real file system that
 * runs out of space (a 128 KiB tmpfs). Mounting needs root (or CAP_SYS_ADMIN): elsewhere these
 * tests are skipped, since faking ENOSPC would not test the kernel's answer.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runAgent } from '../../../src/jobs/runner/run-agent.ts';
import { demoAgent, invocation, isAlive, makeTempRun, type TempRun } from './helpers.ts';

const mountPoint = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-full-'));
let mounted = false;
beforeAll(() => {
  mounted =
    process.platform === 'linux' &&
    spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=128k', 'tmpfs', mountPoint]).status === 0;
});
afterAll(() => {
  if (mounted) spawnSync('umount', [mountPoint]);
  fs.rmSync(mountPoint, { recursive: true, force: true });
});

let run: TempRun;
beforeEach((ctx) => {
  if (!mounted)
    ctx.skip(
      'needs root (and Linux) to mount a small tmpfs: run as root, e.g. in the CI container',
    );
  run = makeTempRun();
  for (const name of fs.readdirSync(mountPoint)) {
    fs.rmSync(path.join(mountPoint, name), { recursive: true, force: true });
  }
});
afterEach(() => run?.cleanup());

/** Fills the tmpfs to the last byte. */
function fillDisk(): void {
  const fd = fs.openSync(path.join(mountPoint, 'filler'), 'w');
  const block = Buffer.alloc(4096, 1);
  try {
    for (;;) fs.writeSync(fd, block);
  } catch (err) {
    expect((err as NodeJS.ErrnoException).code).toBe('ENOSPC');
  } finally {
    fs.closeSync(fd);
  }
}

describe('runAgent on a full disk', () => {
  it('kills an agent whose output no longer fits and fails the step with "no space left"', async () => {
    const logFile = path.join(mountPoint, 'logs', 'build-1.log');
    const pids: number[] = [];
    const started = Date.now();
    // 1 MB of output into 128 KiB, then the agent would hang forever: only the fault ends it.
    const out = await runAgent(
      demoAgent(),
      invocation(run, {
        logFile,
        prompt: 'demo: noise=1000000 hang',
        timeoutMs: 60_000,
        onSpawn: (pid) => pids.push(pid),
      }),
    );

    expect(out.ok).toBe(false);
    expect(out.failure).toBe(`no space left on ${logFile}: free some space, then retry`);
    expect(out.timedOut).toBe(false);
    expect(out.cancelled).toBe(false);
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(pids).toHaveLength(1);
    expect(isAlive(pids[0]!)).toBe(false);
    // What fitted was kept: the header and the start of the output.
    expect(fs.readFileSync(logFile, 'utf8')).toMatch(/^\[phasebridge\] \S+Z start agent=demo /);
  });

  it('fails before starting the agent when not even the header fits', async () => {
    const logFile = path.join(mountPoint, 'build-1.log');
    fs.writeFileSync(logFile, '');
    fillDisk();
    const pids: number[] = [];
    const out = await runAgent(
      demoAgent(),
      invocation(run, { logFile, prompt: 'demo: sleep=0', onSpawn: (pid) => pids.push(pid) }),
    );
    expect(out).toMatchObject({
      ok: false,
      failure: `no space left on ${logFile}: free some space, then retry`,
    });
    expect(pids).toEqual([]);
  });

  it('runs the step normally again once space is free', async () => {
    const logFile = path.join(mountPoint, 'build-2.log');
    const out = await runAgent(demoAgent(), invocation(run, { logFile, prompt: 'demo: sleep=0' }));
    expect(out).toMatchObject({ ok: true, exitCode: 0 });
    expect(out.failure).toBeUndefined();
  });
});
