/**
 * The bridge's /metrics (http/metrics.ts) fed from what it runs: bridge.db's runs, the queue, the
 * workers seen, and the engine's decisions and steps.
 */
import { countsBy } from '../db/health.ts';
import type { AnyBridgeDb } from '../db/migrator.ts';
import { BridgeMetrics } from '../http/metrics.ts';
import type { RunUpdate } from '../jobs/orchestrator/orchestrator.ts';
import type { JobQueue } from '../jobs/queue/port.ts';
import type { Log } from '../log.ts';
import type { Leadership } from './leadership.ts';
import type { WorkerWatch } from './worker-watch.ts';

/** The metrics of a bridge on `db` and `queue`; `watch` counts the workers, `lead` its lease. */
export function bridgeMetrics(
  log: Log,
  db: AnyBridgeDb,
  queue: JobQueue,
  watch: WorkerWatch | null,
  lead: Leadership | undefined,
): BridgeMetrics {
  return new BridgeMetrics({
    log,
    // Alone on its home or database, or the lease's holder: it is the leader.
    info: { role: 'leader', database: db.dialect, queue: queue.driver },
    ...(lead ? { leaseAgeSeconds: lead.leaseAgeSeconds } : {}),
    runsByStatus: () => countsBy(db, 'runs', 'status'),
    // Queue depth with either driver (BullMQ counts in Redis).
    ...(queue.counts ? { jobsByState: () => queue.counts!() } : {}),
    ...(watch
      ? {
          workersByKind: async () => {
            await watch.refresh(); // a scrape sees workers as of now, not 5 s ago
            return watch.counts();
          },
          runningByKind: async () => watch.running(),
        }
      : {}),
  });
}

/** Feeds the decision-latency and step-duration histograms from the engine's events. */
export function recordDecisions(metrics: BridgeMetrics, update: RunUpdate): void {
  for (const event of update.events) {
    if (event.type === 'stepCompleted' || event.type === 'stepFailed') {
      const step = update.state.steps.find((s) => s.id === event.stepId);
      const outcome = event.type === 'stepCompleted' ? 'completed' : 'failed';
      if (step?.startedAt)
        metrics.stepFinished(outcome, step.startedAt, step.finishedAt ?? event.at);
      continue;
    }
    if (event.type !== 'checkpointResolved') continue;
    const cp = update.state.checkpoints.find((c) => c.id === event.checkpointId);
    if (cp) metrics.checkpointDecided(event.decision.answer, cp.openedAt, event.decision.at);
  }
}
