/**
 * `phasebridge worker` with REDIS_URL: a worker that needs no bridge.db. It opens the BullMQ
 * queue, registers itself (heartbeat, labels, engines, running jobs) and runs the jobs it
 * accepts in its own home (`<home>/work` for git-mode clones). Agents get this machine's
 * environment (their credentials live here), minus the bridge's secrets.
 */
import type { CliContext } from './context.ts';

/** What the remote worker runs with. */
export interface RemoteWorkerOptions {
  concurrency: number;
  labels: string[];
  engines?: string[];
  /** Resolves when the worker should stop (a signal). */
  untilStopped(): Promise<void>;
}

/** Runs the worker until `untilStopped` resolves, then lets running jobs finish. */
export async function runRemoteWorker(ctx: CliContext, opts: RemoteWorkerOptions): Promise<void> {
  const [
    { createBullmqQueue },
    { startJobWorker },
    { SECRET_ENV_NAMES },
    { redactRedisUrl },
    { bullmqLease },
  ] = await Promise.all([
    import('../jobs/queue/bullmq-driver.ts'),
    import('../jobs/orchestrator/worker.ts'),
    import('../config.ts'),
    import('../jobs/queue/bullmq-redis.ts'),
    import('../jobs/queue/create-queue.ts'),
  ]);
  const config = await ctx.config();
  const home = await ctx.home();
  const log = (await ctx.logger()).child({ component: 'worker' });
  const url = config.redisUrl!;
  const queue = await createBullmqQueue({
    url,
    ...bullmqLease(config.jobLeaseMs),
    onError: (err, context) => log.warn({ err }, `job queue: ${context}`),
  });
  try {
    const worker = await startJobWorker({
      queue,
      log,
      concurrency: opts.concurrency,
      home,
      labels: opts.labels,
      ...(opts.engines === undefined ? {} : { engines: opts.engines }),
      secretEnvNames: SECRET_ENV_NAMES,
    });
    const traits = [
      `concurrency ${opts.concurrency}`,
      `labels ${opts.labels.join(',') || '(none)'}`,
      `engines ${opts.engines?.join(',') ?? 'all'}`,
    ];
    console.log(
      `worker ${worker.id} (pid ${process.pid}) running jobs from BullMQ on ${redactRedisUrl(url)}, ${traits.join(', ')}; Ctrl-C stops it`,
    );
    await opts.untilStopped();
    await worker.close();
  } finally {
    await queue.close();
  }
}
