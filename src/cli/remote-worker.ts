/**
 * `phasebridge worker` with REDIS_URL: a worker that needs no bridge.db. It opens the BullMQ
 * queue, registers itself (heartbeat, labels, engines, running jobs) and runs the jobs it
 * accepts in its own home (`<home>/work` for git-mode clones). Agents get this machine's
 * environment (their credentials live here), minus the bridge's secrets. A worker whose home
 * holds a bridge.db (the shared-volume set-up) also passes the env values stored there, as
 * before jobs were self-contained; it never creates one.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
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
  const stored = await storedAgentEnv(join(home, 'bridge.db'));
  try {
    const worker = await startJobWorker({
      ...(stored === null ? {} : { agentEnv: stored.env }),
      queue,
      log,
      concurrency: opts.concurrency,
      home,
      labels: opts.labels,
      ...(opts.engines === undefined ? {} : { engines: opts.engines }),
      secretEnvNames: SECRET_ENV_NAMES,
      agentNice: config.agentNice,
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
    await stored?.close();
  }
}

/** Env values of agents in an existing bridge.db (null when there is none); `close` it after. */
async function storedAgentEnv(file: string): Promise<{
  env(name: string): Promise<Record<string, string>>;
  close(): Promise<void>;
} | null> {
  if (!existsSync(file)) return null;
  const [{ openBridgeDb }, { createRepositories }, { AgentResolver }] = await Promise.all([
    import('../db/connection.ts'),
    import('../db/repositories/index.ts'),
    import('../jobs/orchestrator/agent-resolver.ts'),
  ]);
  const db = openBridgeDb({ file });
  const agents = new AgentResolver(createRepositories(db).agents);
  return {
    env: async (name) => {
      try {
        return (await agents.resolve(name)).env;
      } catch {
        return {}; // not there (another bridge's db, or not migrated): the job's names still apply
      }
    },
    close: () => db.close(),
  };
}
