/**
 * A job worker: runs step and trigger jobs from the queue without driving runs. The bridge's
 * in-process worker and `phasebridge worker` (any machine: it needs only REDIS_URL, since jobs
 * are self-contained) both start one here. Results reach whichever orchestrator listens to the
 * queue (serve, or a CLI process); one that starts later applies them at start-up.
 */
import path from 'node:path';
import type { Log } from '../../log.ts';
import { GitWorkFolders } from '../git/worker-git.ts';
import { errorMessage } from '../queue/outcome.ts';
import type { JobQueue, QueuedJob, Worker } from '../queue/port.ts';
import { approvalServerCommand } from './approval-command.ts';
import { acceptsJob } from './job-agent.ts';
import { createStepProcessor } from './step-processor.ts';

/** Options of {@link startJobWorker}. */
export interface JobWorkerOptions {
  queue: JobQueue;
  log: Log;
  concurrency: number;
  /** PHASEBRIDGE_HOME: git-mode clone cache and work folders go to `<home>/work`. */
  home: string;
  /** Labels this worker carries (steps with `runsOn` need them). */
  labels?: readonly string[];
  /** Engines it runs (absent: all). */
  engines?: readonly string[];
  /** The bridge's own worker (listed as such). */
  inProcess?: boolean;
  /** Values of agents' env names (the bridge's bridge.db); a remote worker uses its own env. */
  agentEnv?(agentName: string): Promise<Record<string, string>>;
  /** Config SECRET_ENV_NAMES: never passed to agents. */
  secretEnvNames?: readonly string[];
  /** SIGTERM → SIGKILL grace for agents (default 5 s). */
  killGraceMs?: number;
  /** Agents run this much below our CPU priority (config PHASEBRIDGE_AGENT_NICE). */
  agentNice?: number;
  /** Called when an agent process exists. */
  onSpawn?(job: QueuedJob, pid: number): void;
  /** While false no job is taken (left for other workers): a bridge that no longer leads. */
  accepting?(): boolean;
}

/** Starts a worker on `queue`; close it (then the queue) to stop. */
export async function startJobWorker(opts: JobWorkerOptions): Promise<Worker> {
  const labels = [...(opts.labels ?? [])];
  const traits = opts.engines === undefined ? { labels } : { labels, engines: opts.engines };
  let workerId: string | undefined;
  const workFolders = new GitWorkFolders(path.join(opts.home, 'work'));
  const step = createStepProcessor({
    workerId: () => workerId,
    ...(opts.agentEnv === undefined ? {} : { agentEnv: opts.agentEnv }),
    workFolders,
    approvalServer: approvalServerCommand(opts.home),
    ...(opts.secretEnvNames === undefined ? {} : { secretEnvNames: opts.secretEnvNames }),
    ...(opts.killGraceMs === undefined ? {} : { killGraceMs: opts.killGraceMs }),
    ...(opts.agentNice === undefined ? {} : { agentNice: opts.agentNice }),
    onSpawn: (job, pid) => {
      opts.log.info({ jobId: job.id, pid, worker: workerId }, 'agent started');
      opts.onSpawn?.(job, pid);
    },
    onReportError: (err) => opts.log.warn({ err: errorMessage(err) }, 'job report failed'),
  });
  const worker = await opts.queue.startWorker(step.processor, {
    concurrency: opts.concurrency,
    accepts: (job) => (opts.accepting?.() ?? true) && acceptsJob(job.payload, traits),
    announce: {
      labels,
      ...(opts.engines === undefined ? {} : { engines: [...opts.engines] }),
      inProcess: opts.inProcess === true,
    },
  });
  workerId = worker.id;
  return {
    id: worker.id,
    close: async () => {
      await worker.close();
      step.close();
      workFolders.close();
    },
  };
}
