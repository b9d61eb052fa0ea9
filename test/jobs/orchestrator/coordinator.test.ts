/**
 * The coordinator preset end to end with real demo agents: discover writes 4 tasks, the plan is
 * confirmed at its checkpoint, the tasks run on 2 workers (embedded queue; BullMQ with two
 * `phasebridge worker` processes when Redis is here), merge, verify and summarize fill
 * `.coordinator/state.json` (every key of the seed's schema), which is archived on completion.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { RunEvent } from '../../../src/engine/events.ts';
import { COORDINATOR_YAML } from '../../../src/engine/workflow/builtin.ts';
import { createBullmqQueue } from '../../../src/jobs/queue/bullmq-driver.ts';
import {
  inCi,
  NO_REDIS_BANNER,
  type RedisHandle,
  redisAvailable,
  startRedis,
} from '../../support/redis.ts';
import { startWorkerProcess, type WorkerProcess } from '../../support/worker-processes.ts';
import { ALICE, approve, ledgerOf, makeEnv, repeatedKeys, type TestEnv } from './helpers.ts';

const BEHAVIOUR = 'sleep=200 tasks=4 taskfile=.coordinator/tasks.json tests=12/12';
const GOLDEN = path.join(import.meta.dirname, 'golden', 'coordinator-state.golden.json');
const SEED_KEYS = [
  'session_id',
  'state',
  'started_at',
  'updated_at',
  'config',
  'tasks',
  'workers',
  'merge_queue',
  'verification',
  'summary',
];

let env: TestEnv | undefined;
afterEach(async () => {
  await env?.dispose();
  env = undefined;
  process.env.DEMO_AGENT_BEHAVIOUR = 'sleep=20';
});

function maxInFlight(events: RunEvent[]): number {
  const flying = new Set<string>();
  let max = 0;
  for (const e of events) {
    if (e.type === 'taskQueued') flying.add(e.taskId);
    if (e.type === 'taskCompleted' || e.type === 'taskFailed') flying.delete(e.taskId);
    max = Math.max(max, flying.size);
  }
  return max;
}

/** The state.json with times and ids made stable, for the golden file. */
function normalized(doc: Record<string, unknown>): string {
  return `${JSON.stringify(doc, null, 2)
    .replace(/"\d{4}-\d{2}-\d{2}T[0-9:.]+Z"/g, '"<time>"')
    .replace(/coord-\d{4}-\d{2}-\d{2}-[0-9a-f]{6}/g, 'coord-<date>-<id>')
    .replace(/"\d{4}-\d{2}-\d{2}T\d{6}Z-[a-z0-9-]+"/g, '"<run id>"')}\n`;
}

async function coordinatorRun(e: TestEnv, open: () => ReturnType<TestEnv['open']>) {
  const o = await open();
  const run = await o.startRun({
    workflow: 'coordinator',
    workspace: e.workspace,
    spec: 'ship the backlog',
    actor: ALICE,
  });
  const waiting = await o.waitUntilIdle(run.id);
  expect(waiting.status).toBe('awaiting');
  expect(waiting.checkpoint?.stepId).toBe('plan');
  const planning = JSON.parse(
    fs.readFileSync(path.join(e.workspace, '.coordinator', 'state.json'), 'utf8'),
  );
  expect(Object.keys(planning)).toEqual(expect.arrayContaining(SEED_KEYS));
  expect(planning).toMatchObject({
    state: 'PLANNING',
    summary: null,
    verification: { status: null },
  });
  expect(planning.session_id).toMatch(/^coord-\d{4}-\d{2}-\d{2}-[0-9a-f]{6}$/);
  const end = await approve(o, run.id, 'cli:confirm-plan');
  expect(end.status).toBe('completed');
  expect(fs.existsSync(path.join(e.workspace, '.coordinator'))).toBe(false);
  const archive = fs.readdirSync(e.workspace).find((f) => /^\.coordinator\.archive\.\d+$/.test(f));
  expect(archive).toBeDefined();
  const done = JSON.parse(fs.readFileSync(path.join(e.workspace, archive!, 'state.json'), 'utf8'));
  expect(done).toMatchObject({
    state: 'IDLE',
    config: {
      execution_mode: 'parallel',
      max_workers: 2,
      autonomy_level: 'supervised',
      reporting: 'summary-only',
    },
    tasks: { queued: [], in_progress: [], completed: ['t1', 't2', 't3', 't4'], failed: [] },
    merge_queue: [],
    verification: { status: 'passed', tests_total: 12, tests_passed: 12, build_status: 'passed' },
  });
  expect(
    done.workers.map((w: { pr_number: number; merged: boolean }) => [w.pr_number, w.merged]),
  ).toEqual([
    [101, true],
    [102, true],
    [103, true],
    [104, true],
  ]);
  const events = ledgerOf(end).flatMap((x) => x.events);
  expect(maxInFlight(events)).toBe(2);
  expect(repeatedKeys(ledgerOf(end))).toEqual([]);
  return done;
}

describe('coordinator preset', () => {
  it('runs end to end on the embedded queue with 4 tasks on 2 workers, then archives', async () => {
    process.env.DEMO_AGENT_BEHAVIOUR = BEHAVIOUR;
    env = await makeEnv();
    const e = env;
    const done = await coordinatorRun(e, () => e.open({ worker: { concurrency: 2 } }));
    const text = normalized(done);
    if (process.env.UPDATE_GOLDEN === '1') fs.writeFileSync(GOLDEN, text);
    expect(text).toBe(fs.readFileSync(GOLDEN, 'utf8'));
  });

  it('removes .coordinator/ at the end when the workflow says onComplete: remove', async () => {
    process.env.DEMO_AGENT_BEHAVIOUR =
      'sleep=20 tasks=2 taskfile=.coordinator/tasks.json tests=3/3';
    env = await makeEnv();
    env.workflow(
      'coordrm',
      COORDINATOR_YAML.replace(
        'id: coordinator\n',
        'id: coordrm\ncoordinator: { onComplete: remove }\n',
      ),
    );
    const o = await env.open({ worker: { concurrency: 2 }, coordinatorOnComplete: 'archive' });
    const run = await o.startRun({
      workflow: 'coordrm',
      workspace: env.workspace,
      spec: 's',
      track: 'autonomous',
      actor: ALICE,
    });
    const end = await o.waitUntilIdle(run.id);
    expect(end.status).toBe('completed');
    expect(end.workflow.coordinator).toEqual({ onComplete: 'remove' });
    // The workflow's own setting wins over the bridge's default; nothing else is left behind.
    expect(fs.readdirSync(env.workspace).filter((f) => f.startsWith('.coordinator'))).toEqual([]);
  });

  it('refuses to start over an interrupted coordinator session', async () => {
    env = await makeEnv();
    fs.mkdirSync(path.join(env.workspace, '.coordinator'));
    fs.writeFileSync(
      path.join(env.workspace, '.coordinator', 'state.json'),
      JSON.stringify({ session_id: 'coord-2026-01-20-abc123', state: 'EXECUTING' }),
    );
    const o = await env.open();
    await expect(
      o.startRun({ workflow: 'coordinator', workspace: env.workspace, spec: 's', actor: ALICE }),
    ).rejects.toThrow(
      /interrupted coordinator session \(coord-2026-01-20-abc123, state EXECUTING\)/,
    );
  });
});

const redisOk = redisAvailable().ok || inCi();
if (!redisOk) process.stderr.write(NO_REDIS_BANNER);
describe.runIf(redisOk)('coordinator preset on BullMQ', () => {
  let redis: RedisHandle;
  const workers: WorkerProcess[] = [];
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    for (const w of workers) await w.stop();
    await redis?.stop();
  });

  it('runs the 4 tasks on 2 worker processes', async () => {
    env = await makeEnv({}, () => createBullmqQueue({ url: redis.url }));
    const e = env;
    for (let i = 0; i < 2; i++) {
      workers.push(
        await startWorkerProcess({
          home: e.home,
          redisUrl: redis.url,
          concurrency: 1,
          env: { DEMO_AGENT_BEHAVIOUR: BEHAVIOUR },
        }),
      );
    }
    try {
      await coordinatorRun(e, () => e.open({ worker: false }));
    } finally {
      // Stopped before the workspace is removed: they may still be writing their logs.
      for (const w of workers.splice(0)) await w.stop();
    }
  });
});
