/**
 * The other process of bench/feed-latency.ts: an Orchestrator on the same PHASEBRIDGE_HOME that
 * is not the bridge (as a `phasebridge run` started before `serve` is). For each run id read on
 * stdin it approves the run's open checkpoint and prints `<runId> <ms since epoch>` once the
 * commit returned (ledger fsynced, projections written).
 */
import readline from 'node:readline';
import { pino } from 'pino';
import { migrateToLatest, openBridgeDb } from '../src/db/connection.ts';
import { Orchestrator } from '../src/jobs/orchestrator/orchestrator.ts';
import { createJobQueue, queueConfigFor } from '../src/jobs/queue/create-queue.ts';

const home = process.env.PHASEBRIDGE_HOME!;
const db = openBridgeDb({ file: `${home}/bridge.db` });
await migrateToLatest(db);
const queue = await createJobQueue(queueConfigFor({ db, onError: () => {} }));
const o = await Orchestrator.create({
  db,
  queue,
  log: pino({ level: 'silent' }),
  home,
  worker: false,
});
process.stdout.write('ready\n');
for await (const runId of readline.createInterface({ input: process.stdin })) {
  const r = await o.command(runId, `bench:${runId}`, {
    type: 'answerCheckpoint',
    answer: 'approve',
    actor: { id: 'cli:bench' },
  });
  process.stdout.write(`${runId} ${r.ok ? Date.now() : -1}\n`);
}
await o.close();
await queue.close();
await db.close();
