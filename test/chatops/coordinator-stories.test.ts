/**
 * The coordinator preset end to end through chat (the real Telegram adapter against the fake Bot
 * API): `/run coordinator …`, the "confirm plan" checkpoint, Bob's press, 4 tasks on 2 workers
 * (two worker instances on the embedded queue; two `phasebridge worker` processes on BullMQ with
 * a private redis-server), every state.json written moving only along the seed's table, the
 * verification figures and the summary in chat, and `.coordinator/` archived — or removed when
 * the bridge is set to (PHASEBRIDGE_COORDINATOR_ON_COMPLETE=remove, a third, shorter story).
 */
import fs from 'node:fs';
import path from 'node:path';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  COORDINATOR_TRANSITIONS,
  type CoordinatorPhase,
  coordinatorPhase,
} from '../../src/engine/layouts/coordinator/format.ts';
import { readLedger } from '../../src/engine/ledger/ledger-file.ts';
import { type RunLedgerEntry, replayEntries } from '../../src/engine/store/run-analysis.ts';
import { taskLogPath } from '../../src/jobs/orchestrator/task-jobs.ts';
import { startJobWorker } from '../../src/jobs/orchestrator/worker.ts';
import { createBullmqQueue } from '../../src/jobs/queue/bullmq-driver.ts';
import type { Worker } from '../../src/jobs/queue/port.ts';
import {
  inCi,
  NO_REDIS_BANNER,
  type RedisHandle,
  redisAvailable,
  startRedis,
} from '../support/redis.ts';
import { slow } from '../support/slowdown.ts';
import {
  startWorkerProcess,
  type WorkerProcess,
  workerPidOfLog,
} from '../support/worker-processes.ts';
import { ALICE, BOB, World, type WorldOptions } from './support.ts';

const BEHAVIOUR = 'sleep=200 tasks=4 taskfile=.coordinator/tasks.json tests=12/12';
process.env.DEMO_AGENT_BEHAVIOUR = BEHAVIOUR;

let w: World | undefined;
const extraWorkers: Worker[] = [];
afterEach(async () => {
  for (const x of extraWorkers.splice(0)) await x.close();
  await w?.cleanup();
  w = undefined;
});

/** Every distinct state.json document the workspace shows, read as it is written. */
function recordStates(workspace: string): { states: CoordinatorPhase[]; stop(): void } {
  const file = path.join(workspace, '.coordinator', 'state.json');
  const states: CoordinatorPhase[] = [];
  let last = '';
  const timer = setInterval(() => {
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch {
      return; // not created yet, or archived
    }
    if (text === last) return;
    last = text;
    const state = (JSON.parse(text) as { state: CoordinatorPhase }).state;
    if (states.at(-1) !== state) states.push(state);
  }, 2);
  return { states, stop: () => clearInterval(timer) };
}

/** Each pair of consecutive states is one of the seed's transitions. */
function offTable(states: readonly CoordinatorPhase[]): string[] {
  const bad: string[] = [];
  for (let i = 1; i < states.length; i++) {
    const [from, to] = [states[i - 1]!, states[i]!];
    if (!COORDINATOR_TRANSITIONS[from].includes(to)) bad.push(`${from} → ${to}`);
  }
  return bad;
}

/** The coordinator state after every commit of the run's ledger (what each write projected). */
function ledgerPhases(workspace: string, runId: string): CoordinatorPhase[] {
  const file = path.join(workspace, '.phasebridge', 'runs', runId, 'ledger.jsonl');
  const entries = readLedger(file).entries as RunLedgerEntry[];
  const out: CoordinatorPhase[] = [];
  const replayed = replayEntries(entries, -1, undefined, (_count, state) => {
    const phase = coordinatorPhase(state);
    if (out.at(-1) !== phase) out.push(phase);
  });
  expect(replayed.goodCount).toBe(entries.length);
  return out;
}

/** Drives the preset through chat; returns what the test checks further. */
async function coordinatorThroughChat(world: World) {
  const rec = recordStates(world.workspace);
  try {
    world.say(ALICE, '/run coordinator ship the backlog');
    const plan = await world.message(/Checkpoint plan:1/);
    expect(plan.text).toMatch(/confirm plan: step plan finished; approve to start executing/);
    const runId = /— run (\S+)/.exec(plan.text!)![1]!;
    const planning = JSON.parse(
      fs.readFileSync(path.join(world.workspace, '.coordinator', 'state.json'), 'utf8'),
    );
    expect(planning).toMatchObject({ state: 'PLANNING', tasks: { completed: [] }, summary: null });
    expect(await world.answerTo(world.press(BOB, plan, 'Approve'))).toBe(
      'Approved — 1 of 1 approval; the run moves on',
    );
    const end = await world.message(/^🏁 Run \S+ Completed/);
    rec.stop();
    expect(end.text).toContain(`Run ${runId} Completed`);
    expect(end.text).toContain('Verification passed: 12 of 12 tests passed, build passed');
    expect(end.text).toContain('Summary: 4 of 4 task(s) completed');
    expect(end.text).toMatch(/Tasks: 4 of 4 completed by worker-1, worker-2/);
    const state = await world.b.orchestrator.getRun(runId);
    expect(state.status).toBe('completed');
    // The states the workspace showed, and the state of every commit, follow the seed's table.
    const phases = ledgerPhases(world.workspace, runId);
    expect(phases).toEqual([
      'DISCOVERING',
      'PLANNING',
      'EXECUTING',
      'MERGING',
      'VERIFYING',
      'SUMMARIZING',
      'IDLE',
    ]);
    expect(offTable(rec.states)).toEqual([]);
    expect(rec.states.slice(0, 3)).toEqual(['DISCOVERING', 'PLANNING', 'EXECUTING']);
    expect(rec.states).toEqual(expect.arrayContaining(['MERGING', 'VERIFYING', 'SUMMARIZING']));
    return { runId, state, end };
  } finally {
    rec.stop();
  }
}

/** The archived session, checked: IDLE, every task done, two workers, the verification figures. */
function checkArchive(workspace: string) {
  expect(fs.existsSync(path.join(workspace, '.coordinator'))).toBe(false);
  const archive = fs.readdirSync(workspace).find((f) => /^\.coordinator\.archive\.\d+$/.test(f));
  expect(archive).toBeDefined();
  const done = JSON.parse(fs.readFileSync(path.join(workspace, archive!, 'state.json'), 'utf8'));
  expect(done).toMatchObject({
    state: 'IDLE',
    tasks: { queued: [], in_progress: [], completed: ['t1', 't2', 't3', 't4'], failed: [] },
    merge_queue: [],
    verification: { status: 'passed', tests_total: 12, tests_passed: 12, build_status: 'passed' },
    summary: '4 of 4 task(s) completed',
  });
  const ids = new Set(done.workers.map((x: { id: string }) => x.id));
  expect([...ids].sort()).toEqual(['worker-1', 'worker-2']);
  return done;
}

describe('coordinator preset through chat, embedded queue', () => {
  it('confirms the plan in chat, spreads 4 tasks over 2 workers and archives the session', async () => {
    const options: WorldOptions = { orchestrator: { worker: { concurrency: 1 } } };
    w = await World.create(options);
    // The second worker: another instance on the same embedded queue (as `serve` runs one).
    extraWorkers.push(
      await startJobWorker({
        queue: w.b.queue,
        log: pino({ level: 'silent' }),
        concurrency: 1,
        home: w.home,
      }),
    );
    const { state } = await coordinatorThroughChat(w);
    const tasks = state.steps.find((s) => s.id === 'execute')!.tasks!;
    // Each task names the queue worker that ran it: both instances took tasks.
    expect(new Set(tasks.map((t) => t.worker)).size).toBe(2);
    checkArchive(w.workspace);
  });
});

describe('coordinator onComplete through chat', () => {
  it('removes .coordinator/ at the end when the bridge is set to remove', async () => {
    w = await World.create({ orchestrator: { coordinatorOnComplete: 'remove' } });
    w.say(ALICE, '/run coordinator ship the backlog');
    const plan = await w.message(/Checkpoint plan:1/);
    w.press(BOB, plan, 'Approve');
    const end = await w.message(/^🏁 Run \S+ Completed/);
    expect(end.text).toContain('Session .coordinator/ removed');
    // Nothing of the session is left: no folder, no archive.
    expect(fs.readdirSync(w.workspace).filter((f) => f.startsWith('.coordinator'))).toEqual([]);
  });
});

const redisOk = redisAvailable().ok || inCi();
if (!redisOk) process.stderr.write(NO_REDIS_BANNER);
describe.runIf(redisOk)('coordinator preset through chat on BullMQ', () => {
  let redis: RedisHandle;
  const processes: WorkerProcess[] = [];
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    await redis?.stop();
  });

  it(
    'runs the tasks on 2 worker processes and archives the session',
    async () => {
      w = await World.create({
        queue: () => createBullmqQueue({ url: redis.url }),
        orchestrator: { worker: false },
      });
      const world = w;
      try {
        // Both started at once; each resolves only when its process takes jobs (ready, not timed).
        const starting = [0, 1].map(() =>
          startWorkerProcess({
            home: world.home,
            redisUrl: redis.url,
            concurrency: 1,
            env: { DEMO_AGENT_BEHAVIOUR: BEHAVIOUR },
          }),
        );
        const started = await Promise.allSettled(starting);
        // Kept for the finally's stop even when the other one failed to start.
        for (const r of started) if (r.status === 'fulfilled') processes.push(r.value);
        for (const r of started) if (r.status === 'rejected') throw r.reason;
        const { runId, state, end } = await coordinatorThroughChat(world);
        expect(end.text).toContain('Session .coordinator/ archived');
        checkArchive(world.workspace);
        const tasks = state.steps.find((s) => s.id === 'execute')!.tasks!;
        const pids = tasks.map((t) =>
          workerPidOfLog(
            fs.readFileSync(taskLogPath(world.workspace, runId, 'execute', t.id, 1), 'utf8'),
          ),
        );
        // The task logs name the worker process that ran each task: both processes did.
        expect(new Set(pids)).toEqual(new Set(processes.map((p) => p.pid)));
        expect(new Set(tasks.map((t) => t.worker)).size).toBe(2);
      } finally {
        // Stopped before the workspace is removed: they may still be writing their logs.
        for (const p of processes.splice(0)) await p.stop();
      }
      // Two process starts and a whole workflow on a loaded 2-core machine: a deadline, not a goal.
    },
    slow(120_000),
  );
});
