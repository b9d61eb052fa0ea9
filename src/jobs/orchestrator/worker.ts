/**
 * A stand-alone job worker (`phasebridge worker`): runs step and trigger jobs from the queue
 * without driving runs. Its results reach whichever orchestrator listens to the queue (serve,
 * or a CLI process); one that starts later applies them at start-up (reconciliation).
 */
import type { BridgeDb } from '../../db/connection.ts';
import { createRepositories } from '../../db/repositories/index.ts';
import type { Log } from '../../log.ts';
import { errorMessage } from '../queue/outcome.ts';
import type { JobQueue, Worker } from '../queue/port.ts';
import { AgentResolver } from './agent-resolver.ts';
import { createStepProcessor } from './step-processor.ts';

/** Options of {@link startJobWorker}. */
export interface JobWorkerOptions {
  /** bridge.db (named agents). */
  db: BridgeDb;
  queue: JobQueue;
  log: Log;
  concurrency: number;
  /** Config SECRET_ENV_NAMES: never passed to agents. */
  secretEnvNames?: readonly string[];
  /** SIGTERM → SIGKILL grace for agents (default 5 s). */
  killGraceMs?: number;
}

/** Starts a worker on `queue`; close it (then the queue) to stop. */
export async function startJobWorker(opts: JobWorkerOptions): Promise<Worker> {
  const repos = createRepositories(opts.db);
  const agents = new AgentResolver(repos.agents);
  const step = createStepProcessor({
    resolveAgent: (name) => agents.resolve(name),
    fullAllowed: (workspace) => repos.fullAccess.allowed(workspace),
    ...(opts.secretEnvNames === undefined ? {} : { secretEnvNames: opts.secretEnvNames }),
    ...(opts.killGraceMs === undefined ? {} : { killGraceMs: opts.killGraceMs }),
    onSpawn: (job, pid) => opts.log.info({ jobId: job.id, pid }, 'agent started'),
    onReportError: (err) => opts.log.warn({ err: errorMessage(err) }, 'job report failed'),
  });
  const worker = await opts.queue.startWorker(step.processor, { concurrency: opts.concurrency });
  return {
    id: worker.id,
    close: async () => {
      await worker.close();
      step.close();
    },
  };
}
