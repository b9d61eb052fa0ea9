/**
 * `phasebridge sessions`: a coordinator session interrupted by SIGKILL mid-execution is listed
 * with the seed's summary and resumed to completion (unfinished tasks only); one waiting at its
 * plan is aborted (run cancelled, .coordinator/ removed) or restarted (a new session).
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { RunEvent } from '../../src/engine/events.ts';
import { readLedger } from '../../src/engine/ledger/ledger-file.ts';
import { slow } from '../support/slowdown.ts';
import { MANY_STEPS_TIMEOUT_MS } from './support.ts';

const BIN = path.resolve(import.meta.dirname, '../../bin/phasebridge.js');
const FAST = 'sleep=20 tasks=4 taskfile=.coordinator/tasks.json tests=3/3';

let root = '';
const started: ChildProcess[] = [];
afterEach(async () => {
  const alive = started.splice(0).filter((c) => c.exitCode === null && c.signalCode === null);
  const exited = alive.map((c) => new Promise((r) => c.once('exit', r)));
  for (const c of alive) c.kill('SIGKILL');
  await Promise.all(exited);
  // An agent the killed CLI started can still write its last lines: rmdir then meets ENOTEMPTY
  // (a clean-clone CI run, 2026-12-07); the removal is tried again for a moment.
  if (root) fs.rmSync(root, { recursive: true, force: true, maxRetries: 20, retryDelay: 50 });
});

function setup() {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-sessions-'));
  const home = path.join(root, 'home');
  const ws = path.join(root, 'ws');
  fs.mkdirSync(ws);
  const env = (behaviour: string) => ({
    PATH: process.env.PATH ?? '',
    PHASEBRIDGE_HOME: home,
    LOG_LEVEL: 'silent',
    DEMO_AGENT_BEHAVIOUR: behaviour,
  });
  const cli = (args: string[], behaviour = FAST) => {
    const r = spawnSync(process.execPath, [BIN, ...args], {
      cwd: root,
      env: env(behaviour),
      encoding: 'utf8',
      timeout: slow(90_000),
    });
    return { code: r.status, out: `${r.stdout}${r.stderr}` };
  };
  const stateJson = () => {
    try {
      return JSON.parse(fs.readFileSync(path.join(ws, '.coordinator', 'state.json'), 'utf8'));
    } catch {
      return null;
    }
  };
  return { home, ws, env, cli, stateJson };
}

async function until<T>(check: () => T | null | undefined | false, what: string): Promise<T> {
  const deadline = Date.now() + slow(60_000);
  for (;;) {
    const v = check();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('phasebridge sessions', () => {
  it('resumes a coordinator session SIGKILLed while executing; completed tasks are not redone', {
    timeout: MANY_STEPS_TIMEOUT_MS,
  }, async () => {
    const { ws, env, cli, stateJson } = setup();
    const child = spawn(
      process.execPath,
      [BIN, 'run', 'coordinator', '--workspace', ws, '--spec', 'ship it', '--track', 'autonomous'],
      {
        cwd: root,
        env: env('sleep=700 tasks=4 taskfile=.coordinator/tasks.json'),
        stdio: 'ignore',
      },
    );
    started.push(child);
    // Kill it once a task completed and others are still in flight.
    await until(() => {
      const s = stateJson();
      return (
        s?.state === 'EXECUTING' && s.tasks.completed.length >= 1 && s.tasks.completed.length < 4
      );
    }, 'a half-done execution');
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    const before = stateJson();
    const done = before.tasks.completed as string[];

    const listed = cli(['sessions', '--workspace', ws]);
    expect(listed.code).toBe(0);
    expect(listed.out).toContain('Found interrupted coordinator session:');
    expect(listed.out).toContain(`- Session: ${before.session_id}`);
    expect(listed.out).toContain('- State: EXECUTING');
    expect(listed.out).toContain(`- Completed: ${done.join(', ')}`);
    expect(listed.out).toContain(
      'Next: check worker progress and continue (unfinished tasks only)',
    );

    const resumed = cli(['sessions', 'resume', '--workspace', ws]);
    expect(resumed.code, resumed.out).toBe(0);
    expect(fs.existsSync(path.join(ws, '.coordinator'))).toBe(false);
    const archive = fs.readdirSync(ws).find((f) => f.startsWith('.coordinator.archive.'))!;
    const final = JSON.parse(fs.readFileSync(path.join(ws, archive, 'state.json'), 'utf8'));
    expect(final.state).toBe('IDLE');
    expect(final.tasks.completed.sort()).toEqual(['t1', 't2', 't3', 't4']);
    // Tasks completed before the kill kept their first attempt and ran once.
    const runId = final.phasebridge_run_id as string;
    const ledger = readLedger(path.join(ws, '.phasebridge', 'runs', runId, 'ledger.jsonl'));
    const queued = (ledger.entries as { events: RunEvent[] }[])
      .flatMap((e) => e.events)
      .flatMap((e) => (e.type === 'taskQueued' ? [`${e.taskId}:${e.attempt}`] : []));
    for (const id of done)
      expect(queued.filter((q) => q.startsWith(`${id}:`))).toEqual([`${id}:1`]);
    const logs = path.join(ws, '.phasebridge', 'runs', runId, 'logs', 'tasks', 'execute');
    for (const id of done) {
      expect(fs.readdirSync(logs).filter((f) => f.startsWith(`${id}-`))).toEqual([`${id}-1.log`]);
    }
    expect(cli(['sessions', '--workspace', ws]).out).toContain(`no interrupted session in ${ws}`);
  });

  it('lists flow runs from the cache: a new blocked run shows at once, a hand edit of a finished one with --rescan', () => {
    const { ws, cli } = setup();
    const hourAgo = new Date(Date.now() - 3_600_000);
    const write = (id: string, status: string) => {
      const dir = path.join(ws, '.flow', 'runs', id);
      const created = !fs.existsSync(dir);
      fs.mkdirSync(dir, { recursive: true });
      const text = `state:\n  status: ${status}\n  current_phase: code\n  blocked_reason: tests failed\n`;
      fs.writeFileSync(path.join(dir, 'run.yaml.tmp'), text);
      fs.renameSync(path.join(dir, 'run.yaml.tmp'), path.join(dir, 'run.yaml'));
      fs.utimesSync(path.join(dir, 'run.yaml'), hourAgo, hourAgo);
      // A new folder: the listing changed, and settled long ago.
      if (created) fs.utimesSync(path.dirname(dir), hourAgo, hourAgo);
    };
    write('r1-done', 'completed');
    write('r2-done', 'completed');
    expect(cli(['sessions', '--workspace', ws]).out).toContain(`no interrupted session in ${ws}`);
    write('r3-new', 'blocked'); // flow creates a run
    const listed = cli(['sessions', '--workspace', ws]).out;
    expect(listed).toContain('Blocked: tests failed');
    expect(listed).toContain('- Session: r3-new');
    write('r1-done', 'active'); // a finished run put back by hand
    expect(cli(['sessions', '--workspace', ws]).out).not.toContain('r1-done');
    const rescanned = cli(['sessions', 'list', '--rescan', '--workspace', ws]).out;
    expect(rescanned).toContain('- Session: r1-done');
    expect(rescanned).toContain('- Session: r3-new');
  });

  it('aborts a session waiting at its plan: the run is cancelled and .coordinator/ removed', {
    timeout: MANY_STEPS_TIMEOUT_MS,
  }, () => {
    const { ws, cli, stateJson } = setup();
    expect(cli(['run', 'coordinator', '--workspace', ws, '--spec', 'ship it']).code).toBe(0);
    const s = stateJson();
    expect(s.state).toBe('PLANNING');
    expect(cli(['sessions', '--workspace', ws]).out).toContain(
      'Next: show the plan again for confirmation',
    );
    const aborted = cli(['sessions', 'abort', '--workspace', ws]);
    expect(aborted.code, aborted.out).toBe(0);
    expect(aborted.out).toContain(`session ${s.session_id} aborted: .coordinator/ removed`);
    expect(fs.existsSync(path.join(ws, '.coordinator'))).toBe(false);
    const run = JSON.parse(
      fs.readFileSync(
        path.join(ws, '.phasebridge', 'runs', s.phasebridge_run_id, 'run.json'),
        'utf8',
      ),
    );
    expect(run.status).toBe('cancelled');
  });

  it('restarts a session: the old run is cancelled and a fresh session starts', {
    timeout: MANY_STEPS_TIMEOUT_MS,
  }, () => {
    const { ws, cli, stateJson } = setup();
    expect(cli(['run', 'coordinator', '--workspace', ws, '--spec', 'ship it']).code).toBe(0);
    const old = stateJson();
    const restarted = cli(['sessions', 'restart', '--workspace', ws]);
    expect(restarted.code, restarted.out).toBe(0);
    const fresh = stateJson();
    expect(fresh.phasebridge_run_id).not.toBe(old.phasebridge_run_id);
    expect(fresh.state).toBe('PLANNING');
    const run = JSON.parse(
      fs.readFileSync(
        path.join(ws, '.phasebridge', 'runs', old.phasebridge_run_id, 'run.json'),
        'utf8',
      ),
    );
    expect(run.status).toBe('cancelled');
  });
});
