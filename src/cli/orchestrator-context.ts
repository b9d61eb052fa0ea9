/**
 * Builds the job queue and the Orchestrator for a CLI command from its CliContext, plus the
 * CLI's idempotency keys and rejection mapping. The queue is BullMQ when REDIS_URL is set, else
 * the sqlite driver on the same bridge.db as `serve`.
 */
import { randomUUID } from 'node:crypto';
import type { RunState } from '../engine/model.ts';
import type { CommitResult } from '../engine/store/types.ts';
import { committed } from '../jobs/orchestrator/committed.ts';
import type { Orchestrator } from '../jobs/orchestrator/orchestrator.ts';
import type { JobQueue } from '../jobs/queue/port.ts';
import type { Log } from '../log.ts';
import type { CliContext } from './context.ts';

/** Options of withOrchestrator. */
export interface CliOrchestratorOptions {
  /** Run jobs in this process (`{ concurrency }`), or only commit and enqueue (`false`). */
  worker: { concurrency: number } | false;
}

/** An Orchestrator with the queue it runs on; close both with `close()`. */
export interface CliOrchestrator {
  orchestrator: Orchestrator;
  queue: JobQueue;
  close(): Promise<void>;
}

/** Opens the queue and the Orchestrator (which reconciles runs left behind on creation). */
export async function openOrchestrator(
  ctx: CliContext,
  opts: CliOrchestratorOptions,
): Promise<CliOrchestrator> {
  // Loaded on demand: commands that only read (status, logs, allow …) start faster without it.
  const { Orchestrator } = await import('../jobs/orchestrator/orchestrator.ts');
  const { createJobQueue, queueConfigFor } = await import('../jobs/queue/create-queue.ts');
  const { SECRET_ENV_NAMES } = await import('../config.ts');
  const { bullmqRetention } = await import('../app/retention.ts');
  const config = await ctx.config();
  const db = await ctx.db();
  const log = await quietLog(ctx);
  const queue = await createJobQueue(
    queueConfigFor({
      db,
      redisUrl: config.redisUrl,
      jobLeaseMs: config.jobLeaseMs,
      retention: bullmqRetention(config),
      onError: (err, context) => log.warn({ err }, `job queue: ${context}`),
    }),
  );
  let orchestrator: Orchestrator;
  try {
    orchestrator = await Orchestrator.create({
      db,
      queue,
      log,
      home: config.home,
      workspaceMode: config.workspaceMode,
      coordinatorOnComplete: config.coordinatorOnComplete,
      secretEnvNames: SECRET_ENV_NAMES,
      agentNice: config.agentNice,
      worker: opts.worker,
    });
  } catch (err) {
    await queue.close();
    throw err;
  }
  return {
    orchestrator,
    queue,
    close: async () => {
      try {
        await orchestrator.close();
      } finally {
        await queue.close();
      }
    },
  };
}

/** Runs `fn` with an Orchestrator, closed afterwards (before the CliContext closes bridge.db). */
export async function withOrchestrator<T>(
  ctx: CliContext,
  opts: CliOrchestratorOptions,
  fn: (o: CliOrchestrator) => Promise<T>,
): Promise<T> {
  const opened = await openOrchestrator(ctx, opts);
  try {
    return await fn(opened);
  } finally {
    await opened.close();
  }
}

/** A fresh idempotency key of a CLI command (`cli:<uuid>`). */
export function cliKey(): string {
  return `cli:${randomUUID()}`;
}

/** The state after an accepted commit (its warnings go to stderr); a refusal becomes its error. */
export function acceptedState(result: CommitResult): RunState {
  if (result.ok) {
    // Committed, but a projection failed: say so (it is retried on the next commit).
    for (const w of result.warnings ?? []) process.stderr.write(`phasebridge: warning: ${w}\n`);
    return result.state;
  }
  return committed(result);
}

/**
 * The Orchestrator's logger. The CLI prints its own progress on stdout, so the orchestrator's
 * routine info lines are held back at the default level (LOG_LEVEL=debug shows everything).
 */
async function quietLog(ctx: CliContext): Promise<Log> {
  const quieter = (await ctx.config()).logLevel === 'info' ? { level: 'warn' } : {};
  return (await ctx.logger()).child({ component: 'orchestrator' }, quieter);
}
