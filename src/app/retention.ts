/**
 * The bridge's periodic prune: bridge.db's finished jobs and old audit rows go after the
 * configured retention (audit exported first, see src/db/retention.ts). The first prune runs a
 * little after start-up, off the path to /readyz, then every six hours.
 */
import path from 'node:path';
import type { Config } from '../config.ts';
import type { AnyBridgeDb } from '../db/migrator.ts';
import { type PruneReport, pruneBridgeDb, type RetentionPolicy } from '../db/retention.ts';
import { parseDuration } from '../engine/workflow/duration.ts';
import { type BullmqRetention, DEFAULT_BULLMQ_RETENTION } from '../jobs/queue/bullmq-retention.ts';
import type { Log } from '../log.ts';

/** Time between two prunes of a running bridge. */
export const PRUNE_EVERY_MS = 6 * 3_600_000;

/** The retention policy of a config (its durations are validated by the config schema). */
export function retentionPolicy(config: Config): RetentionPolicy {
  return {
    jobsMs: parseDuration(config.retention.jobs) ?? 30 * 86_400_000,
    auditMs: parseDuration(config.retention.audit) ?? 365 * 86_400_000,
  };
}

/** What BullMQ keeps of finished jobs in Redis: the jobs retention's age and the count caps. */
export function bullmqRetention(config: Config): BullmqRetention {
  return {
    ageMs: retentionPolicy(config).jobsMs,
    completed: config.retention.keepCompleted ?? DEFAULT_BULLMQ_RETENTION.completed,
    failed: config.retention.keepFailed ?? DEFAULT_BULLMQ_RETENTION.failed,
  };
}

/** Where audit exports go: `<home>/audit/`. */
export function auditExportDir(config: Config): string {
  return path.join(config.home, 'audit');
}

/** Timing of the periodic prune (tests shorten it). */
export interface PruneSchedule {
  firstAfterMs?: number;
  everyMs?: number;
}

/** Starts pruning periodically; returns the stop function. A failed prune is logged, not fatal. */
export function schedulePrune(
  db: AnyBridgeDb,
  config: Config,
  log: Log,
  schedule: PruneSchedule = {},
): () => Promise<void> {
  const policy = retentionPolicy(config);
  // One prune at a time: a slow one (Postgres, a large export) is never overtaken by the next.
  let running: Promise<void> | undefined;
  const once = (): void => {
    running ??= pruneBridgeDb(db, { policy, exportDir: auditExportDir(config) })
      .then((r) => {
        if (r.jobs > 0 || r.audit > 0) log.info(pruneFields(r), 'pruned bridge.db');
      })
      .catch((err: unknown) => log.warn({ err }, 'pruning bridge.db failed; tried again later'))
      .finally(() => {
        running = undefined;
      });
  };
  let every: NodeJS.Timeout | undefined;
  const first = setTimeout(() => {
    once();
    every = setInterval(once, schedule.everyMs ?? PRUNE_EVERY_MS);
    every.unref();
  }, schedule.firstAfterMs ?? 10_000);
  first.unref();
  return async () => {
    clearTimeout(first);
    clearInterval(every);
    await running; // bridge.db closes after this: a prune in flight finishes first
  };
}

/** Log fields of a prune report. */
function pruneFields(r: PruneReport) {
  return { jobs: r.jobs, audit: r.audit, auditExport: r.auditExport };
}
