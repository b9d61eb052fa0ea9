/**
 * runAgent ends the agent's whole process tree (kill-tree.ts): at a timeout, on cancel, and what
 * the agent left in its group when it exited.
 */
import fs from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runAgent } from '../../../src/jobs/runner/run-agent.ts';
import {
  demoAgent,
  grandchildPid,
  invocation,
  isAlive,
  makeTempRun,
  type TempRun,
} from './helpers.ts';

let run: TempRun;
beforeEach(() => {
  run = makeTempRun();
});
afterEach(() => run.cleanup());

describe('runAgent: timeout and cancel end the whole process tree', () => {
  it('a timeout SIGTERMs the group, SIGKILLs what ignores it, and kills the grandchild too', async () => {
    let pid = 0;
    const out = await runAgent(
      demoAgent(),
      invocation(run, {
        prompt: 'demo: sleep=0 hang grandchild ignoreterm',
        timeoutMs: 1500,
        onSpawn: (p) => {
          pid = p;
        },
      }),
    );
    const log = fs.readFileSync(run.logFile, 'utf8');
    const grandchild = grandchildPid(log);
    expect(out).toMatchObject({
      ok: false,
      timedOut: true,
      cancelled: false,
      exitCode: null,
      signal: 'SIGKILL',
    });
    expect(out.failure).toBe('timed out after 1.5s');
    expect(log).toContain('SIGTERM to process group');
    expect(log).toContain('SIGKILL sent');
    expect(isAlive(pid)).toBe(false);
    expect(isAlive(grandchild)).toBe(false);
  });

  it('a timeout on an agent that honours SIGTERM ends it with SIGTERM', async () => {
    const out = await runAgent(
      demoAgent(),
      invocation(run, { prompt: 'demo: sleep=0 hang', timeoutMs: 1000 }),
    );
    expect(out).toMatchObject({ timedOut: true, signal: 'SIGTERM', failure: 'timed out after 1s' });
  });

  it('cancel via AbortSignal kills the agent and its grandchild', async () => {
    const ctl = new AbortController();
    const out = await runAgent(
      demoAgent(),
      invocation(run, {
        prompt: 'demo: sleep=20 progress=1 hang grandchild',
        // The progress line comes after the grandchild started: cancel then.
        onProgress: () => ctl.abort(),
        signal: ctl.signal,
      }),
    );
    const grandchild = grandchildPid(fs.readFileSync(run.logFile, 'utf8'));
    expect(out).toMatchObject({
      ok: false,
      cancelled: true,
      timedOut: false,
      failure: 'cancelled',
    });
    expect(isAlive(grandchild)).toBe(false);
  });

  it('processes left in the group after a normal exit are terminated', async () => {
    // The shell backgrounds a sleeper, prints its pid and exits 0 at once.
    const agent = {
      name: 'leaver',
      engine: 'command' as const,
      argv: ['sh', '-c', 'sleep 60 & echo left $!'],
      env: {},
    };
    const out = await runAgent(agent, invocation(run));
    const left = Number(/left (\d+)/.exec(out.outputTail.join('\n'))?.[1]);
    expect(out.ok).toBe(true);
    expect(left).toBeGreaterThan(0);
    expect(isAlive(left)).toBe(false);
  });
});
