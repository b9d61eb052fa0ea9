/**
 * Benchmark: a `tasks` step of 8 independent tasks of 2 s each, on BullMQ (a private
 * redis-server), run by 1 and then by 2 `phasebridge worker` processes of concurrency 2; the
 * step's maxWorkers (8) does not limit it, the worker slots do. Measured: the step's wall time
 * from its task list being read (`tasksPlanned`) to the step completing, both taken from the
 * ledger. Ideal: 4 rounds (8 s) on one worker, 2 rounds (4 s) on two, ratio 2.
 * Prints one JSON object; without Redis it prints `{ skipped: … }`.
 *
 * Run: npx tsx bench/tasks.ts [--tasks 8] [--ms 2000]
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { migrateToLatest, openBridgeDb } from '../src/db/connection.ts';
import type { RunEvent } from '../src/engine/events.ts';
import { readLedger } from '../src/engine/ledger/ledger-file.ts';
import { Orchestrator } from '../src/jobs/orchestrator/orchestrator.ts';
import { createBullmqQueue } from '../src/jobs/queue/bullmq-driver.ts';
import { createLogger } from '../src/log.ts';
import { redisAvailable, startRedis } from '../test/support/redis.ts';
import { startWorkerProcess, workerPidOfLog } from '../test/support/worker-processes.ts';

const arg = (name: string): string | undefined => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const TASKS = Number(arg('tasks') ?? 8);
const TASK_MS = Number(arg('ms') ?? 2000);
const CONCURRENCY = 2;

const WORKFLOW = `id: bench-tasks
steps:
  - { id: plan, agent: demo, prompt: "demo: sleep=0 tasks=${TASKS}" }
  - id: work
    agent: demo
    prompt: "demo: sleep=${TASK_MS}"
    tasks: { file: tasks.json, maxWorkers: ${TASKS} }
`;

/** One scenario: `workers` worker processes; returns the step's wall time and who ran what. */
async function scenario(workers: number) {
  const redis = await startRedis();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-bench-tasks-'));
  const home = path.join(dir, 'home');
  const workspace = path.join(dir, 'ws');
  fs.mkdirSync(path.join(workspace, 'workflows'), { recursive: true });
  fs.writeFileSync(path.join(workspace, 'workflows', 'bench-tasks.workflow.yaml'), WORKFLOW);
  const db = openBridgeDb({ file: path.join(home, 'bridge.db') });
  await migrateToLatest(db);
  const queue = await createBullmqQueue({ url: redis.url });
  const procs = [];
  try {
    for (let i = 0; i < workers; i++) {
      procs.push(await startWorkerProcess({ home, redisUrl: redis.url, concurrency: CONCURRENCY }));
    }
    const o = await Orchestrator.create({
      db,
      queue,
      log: createLogger({ level: 'silent' }),
      home,
      worker: false,
    });
    try {
      const run = await o.startRun({
        workflow: 'bench-tasks',
        workspace,
        spec: 'bench',
        actor: { id: 'bench' },
      });
      const end = await o.waitUntilIdle(run.id);
      if (end.status !== 'completed')
        throw new Error(`run ended ${end.status}: ${end.blocked?.reason}`);
      const ledger = path.join(workspace, '.phasebridge', 'runs', run.id, 'ledger.jsonl');
      const events = readLedger(ledger).entries.flatMap(
        (e) => (e as { events: RunEvent[] }).events,
      );
      const planned = events.find((e) => e.type === 'tasksPlanned')!;
      const done = events.find((e) => e.type === 'stepCompleted' && e.stepId === 'work')!;
      const pids = new Set(
        end.steps[1]!.tasks!.map((t) =>
          workerPidOfLog(
            fs.readFileSync(
              path.join(
                workspace,
                '.phasebridge',
                'runs',
                run.id,
                'logs',
                'tasks',
                'work',
                `${t.id}-1.log`,
              ),
              'utf8',
            ),
          ),
        ),
      );
      return { ms: Date.parse(done.at) - Date.parse(planned.at), workerProcessesUsed: pids.size };
    } finally {
      await o.close();
    }
  } finally {
    for (const p of procs) await p.stop();
    await queue.close();
    await db.close();
    await redis.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function main() {
  const available = redisAvailable();
  if (!available.ok) {
    console.log(JSON.stringify({ skipped: available.reason }));
    return;
  }
  const one = await scenario(1);
  const two = await scenario(2);
  console.log(
    JSON.stringify(
      {
        tasks: TASKS,
        taskMs: TASK_MS,
        workerConcurrency: CONCURRENCY,
        driver: 'bullmq',
        oneWorker: one,
        twoWorkers: two,
        idealMs: {
          oneWorker: (TASKS / CONCURRENCY) * TASK_MS,
          twoWorkers: (TASKS / (2 * CONCURRENCY)) * TASK_MS,
        },
        ratio: Number((one.ms / two.ms).toFixed(2)),
      },
      null,
      2,
    ),
  );
}

await main();
