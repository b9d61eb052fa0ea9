/**
 * Crash test: a child process driving two runs is SIGKILLed at random moments 20 times and
 * restarted; afterwards every run loads, no command was applied twice, and every projection
 * equals the replay of its ledger. The seed is in the test name's failure output.
 *
 * The 21 process starts are most of the test's time on a loaded machine, so: the child is
 * bundled once (test/support/bundle.ts) and started with plain node (tsx compiled it again at
 * every start, ~10 s of CPU in all), and children are started ahead, while the ones before still
 * run, waiting to be told "go" (after the one before is dead) before they touch the workspace. A
 * killed child is given no end, so each kill lands while it is committing, however late it comes.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import type { RunEvent } from '../../../src/engine/events.ts';
import { replay } from '../../../src/engine/evolve.ts';
import { formatRunJson } from '../../../src/engine/layouts/native.ts';
import { readLedger } from '../../../src/engine/ledger/ledger-file.ts';
import { RunStore } from '../../../src/engine/store/run-store.ts';
import { bundled } from '../../support/bundle.ts';
import { exited } from './fixtures/spawn.ts';
import { runFiles, summaryOf, tempWorkspace } from './fixtures/workspace.ts';

const CHILD = fileURLToPath(new URL('./fixtures/crash-child.ts', import.meta.url));
const RUNS = ['2026-11-29T143000Z-crash-a', '2026-11-29T143000Z-crash-b'];
const KILLS = 20;
/** Ledger lines per run at least: the start plus 99 transitions (the last child's goal). */
const TARGET = 100;
/** A child that is to be killed never runs out of commits before the kill comes. */
const ENDLESS = 1_000_000;
/**
 * Children started ahead, waiting for "go": a child's start (a Node process booting, ~0.5-1 s
 * on a loaded machine) overlaps the runs of the ones before it; one ahead was not enough, as a
 * kill often comes within 100 ms of "go".
 */
const AHEAD = 3;

/** Small seeded PRNG (mulberry32), so a failing schedule can be replayed. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const warnings: string[] = [];
const spawned: ChildProcess[] = [];

interface Started {
  child: ChildProcess;
  stderr: () => string;
  /** Lets it start on the workspace. */
  go(): void;
}

/** Starts a child that waits for `go()` before it touches the workspace. */
function startChild(ws: string, target: number): Started {
  const child = spawn(process.execPath, [bundled(CHILD), ws, String(target), ...RUNS], {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, CRASH_CHILD_WAIT: '1' },
  });
  spawned.push(child);
  let err = '';
  child.stderr?.on('data', (d: Buffer) => {
    err += d.toString();
  });
  child.once('exit', () => {
    warnings.push(...err.split('\n').filter((l) => l.startsWith('warning ')));
  });
  return { child, stderr: () => err, go: () => child.stdin?.end('go\n') };
}

/** Resolves after the child printed `lines` progress lines (or finished). */
function afterLines(child: ChildProcess, lines: number): Promise<void> {
  return new Promise((resolve) => {
    let seen = 0;
    child.stdout?.on('data', (d: Buffer) => {
      seen += d.toString().split('\n').length - 1;
      if (seen >= lines) resolve();
    });
    child.once('exit', () => resolve());
  });
}

const ws = tempWorkspace();
afterAll(() => {
  // A child started ahead and never told to go (a failed assertion): not left waiting.
  for (const c of spawned) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  fs.rmSync(ws, { recursive: true, force: true });
});
const seed = Number(process.env.CRASH_SEED ?? Date.now() % 1_000_000);

describe('crash safety', () => {
  it(`survives ${KILLS} SIGKILLs while committing (seed ${seed})`, async () => {
    const random = rng(seed);
    let kills = 0;
    // KILLS children to kill, then one to finish; AHEAD of them started before they are needed.
    const ahead: Started[] = [];
    let started = 0;
    const fill = () => {
      for (; ahead.length < AHEAD && started <= KILLS; started++) {
        ahead.push(startChild(ws, started < KILLS ? ENDLESS : TARGET));
      }
    };
    fill();
    for (let i = 0; i < KILLS; i++) {
      const { child, stderr, go } = ahead.shift()!;
      const lines = afterLines(child, 1 + Math.floor(random() * 8));
      go();
      fill();
      await lines;
      await new Promise((r) => setTimeout(r, Math.floor(random() * 3)));
      if (child.exitCode === null && child.kill('SIGKILL')) kills++;
      const code = await exited(child);
      expect(code === null || code === 0, stderr()).toBe(true);
    }
    const last = ahead.shift()!;
    last.go();
    expect(await exited(last.child), last.stderr()).toBe(0);
    expect(kills).toBe(KILLS);

    const store = new RunStore({ workspace: ws });
    for (const runId of RUNS) {
      const loaded = await store.load(runId);
      expect(loaded.corrupt).toBeNull();
      const read = readLedger<RunEvent>(runFiles(ws, runId).ledger);
      expect(read.corrupt).toBeUndefined();
      expect(read.tornTail).toBeUndefined();
      const keys = read.entries.map((e) => e.key);
      expect(new Set(keys).size).toBe(keys.length);
      // Every commit once, none skipped, in order: as many as the children got to, TARGET at least.
      expect(keys.length).toBeGreaterThanOrEqual(TARGET);
      expect(keys).toEqual([
        'start',
        ...Array.from({ length: keys.length - 1 }, (_, i) => `k${i + 1}`),
      ]);
      const replayed = replay(read.entries.flatMap((e) => e.events));
      expect(loaded.state).toEqual(replayed);
      const runJson = fs.readFileSync(runFiles(ws, runId).runJson, 'utf8');
      expect(JSON.parse(runJson)).toEqual(summaryOf(replayed));
      expect(runJson).toBe(formatRunJson(replayed!));
    }
    await store.close();
    if (process.env.CRASH_VERBOSE) console.log(warnings.join('\n'));
  });
});
