/**
 * A BullMQ worker running our Processor. Around each job it (1) refuses to start a job marked
 * cancelled, (2) puts back as delayed a job this worker does not accept (labels, engines) or
 * whose lane's lock is taken (its run, or its task: port.ts laneOf), so other jobs use the
 * slot, (3) listens on a pub/sub channel so `cancel` from any process aborts the job here.
 */
import { Worker as BullWorker, type ConnectionOptions, DelayedError, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import { markStage } from '../../trace.ts';
import {
  closeWithin,
  cutBackend,
  cutClient,
  type RedisSilence,
  RunningJobs,
  silentRedis,
} from './bullmq-close.ts';
import { type BullJobData, type BullSignal, encodeFailure, encodeSignal } from './bullmq-codec.ts';
import { ReconnectPolicy } from './bullmq-reconnect.ts';
import type { QueueKeys, RunLocks } from './bullmq-redis.ts';
import { WorkerBeat, type WorkerKeys } from './bullmq-workers.ts';
import { type ErrorReporter, runToOutcome } from './outcome.ts';
import {
  CANCEL_REASON,
  laneOf,
  type Processor,
  type ProgressReporter,
  type Worker,
  type WorkerOptions,
} from './port.ts';
import { progressJson } from './signals.ts';

const MAX_RUN_BUSY_WAIT_MS = 1000;

/** Timing of locks and stalled-job recovery (ms). */
export interface BullmqTiming {
  lockDurationMs: number;
  stalledIntervalMs: number;
  /** Times a stalled job is taken again before it fails as lost. */
  maxStalledCount: number;
  /** First wait of a job whose run already has a job running (or this worker refused); doubles per try up to 1 s. */
  runBusyRetryMs: number;
}

/** A started worker, with what its queue's close needs of it. */
export interface BullmqWorker extends Worker {
  /** Resolves once none of its jobs runs. */
  idle(): Promise<void>;
  /** Cuts its connections (a close waiting on a silent Redis ends). */
  cut(): void;
  /** Its close without the bound on a silent Redis (its queue's close bounds it). */
  closeGracefully(): Promise<void>;
}

/** What a worker needs from its queue. */
export interface BullmqWorkerDeps {
  url: string;
  connection: ConnectionOptions;
  /** The queue's connections' reconnection (a worker's connections have their own). */
  reconnect: ReconnectPolicy;
  prefix: string;
  queueName: string;
  keys: QueueKeys;
  commands: Redis;
  runLocks: RunLocks;
  timing: BullmqTiming;
  onError: ErrorReporter;
  /** onError for the connections' own errors (an outage's repeats counted, repeated-errors.ts). */
  onConnectionError: ErrorReporter;
  workerKeys: WorkerKeys;
  /** Time between worker registry heartbeats. */
  heartbeatMs: number;
  /** How long a close waits on a silent Redis once no job runs (bullmq-close.ts). */
  closeSilenceMs: number;
  /** Set once a close of the queue or a worker found Redis silent. */
  silence: RedisSilence;
}

/** Starts a BullMQ worker with `concurrency` slots; resolves once it is connected. */
export async function startBullmqWorker(
  deps: BullmqWorkerDeps,
  processor: Processor,
  opts: WorkerOptions,
): Promise<BullmqWorker> {
  const { keys, timing } = deps;
  const { concurrency } = opts;
  let beat: WorkerBeat | null = null;
  /** Our processors running now: a close's bound on a silent Redis starts once none runs. */
  const running = new RunningJobs();
  // This worker's connections stop reconnecting once it closes (bullmq-reconnect.ts).
  const reconnect = new ReconnectPolicy();
  const connection = { ...deps.connection, retryStrategy: reconnect.retryStrategy };
  /** Puts a job back for later (another of the run's jobs runs, or this worker refuses it). */
  const putBack = async (job: Job<BullJobData>, token?: string): Promise<never> => {
    // Backing off bounds the Redis traffic of a job blocked behind a long agent step.
    const tries = Math.min(Math.max(job.attemptsStarted - 1, 0), 4);
    const wait = Math.min(timing.runBusyRetryMs * 2 ** tries, MAX_RUN_BUSY_WAIT_MS);
    await job.moveToDelayed(Date.now() + wait, token);
    throw new DelayedError();
  };
  // Three parameters: BullMQ passes an abort signal only to processors declaring it.
  const wrapped = async (job: Job<BullJobData>, token?: string, signal?: AbortSignal) => {
    const id = job.id as string;
    const { spec } = job.data;
    markStage(spec.runId, 'claimed');
    if ((await deps.commands.exists(keys.cancelled(id))) === 1) {
      throw new Error(
        encodeFailure({ ok: false, error: 'cancelled before start', cancelled: true }),
      );
    }
    if (opts.accepts !== undefined && !opts.accepts({ ...spec, id })) return putBack(job, token);
    const holder = `${id}|${token}`;
    const lane = laneOf(spec);
    if (!(await deps.runLocks.acquire(lane, holder))) return putBack(job, token);
    beat?.running(id, true);
    const renew = setInterval(
      () => {
        deps.runLocks
          .renew(lane, holder)
          .catch((err: unknown) => deps.onError(err, `renewing run lock of ${id}`));
      },
      Math.max(50, Math.floor(timing.lockDurationMs / 3)),
    );
    // Signals travel as progress events (after the run lock: a job put back is not started).
    let settled = false;
    const send = (s: BullSignal): void => {
      job
        .updateProgress(encodeSignal(s))
        .catch((err: unknown) => deps.onError(err, `sending a signal of job ${id}`));
    };
    const report: ProgressReporter = (data) => {
      const json = settled ? null : progressJson(data, deps.onError, id);
      if (json !== null) send({ type: 'progress', data: JSON.parse(json) });
    };
    send({ type: 'started' });
    running.start();
    try {
      const outcome = await runToOutcome(
        processor,
        { ...spec, id },
        signal ?? new AbortController().signal,
        report,
      ).finally(() => running.end());
      settled = true;
      if (!outcome.ok) throw new Error(encodeFailure(outcome));
      return outcome.result;
    } finally {
      beat?.running(id, false);
      clearInterval(renew);
      await deps.runLocks
        .release(lane, holder)
        .catch((err: unknown) => deps.onError(err, `releasing run lock of ${id}`));
    }
  };

  const worker = new BullWorker<BullJobData, Record<string, unknown>>(deps.queueName, wrapped, {
    connection,
    prefix: deps.prefix,
    concurrency,
    lockDuration: timing.lockDurationMs,
    stalledInterval: timing.stalledIntervalMs,
    maxStalledCount: timing.maxStalledCount,
  });
  worker.on('error', (err) => deps.onConnectionError(err, 'bullmq worker'));

  const subscriber = new Redis(deps.url, {
    maxRetriesPerRequest: null,
    retryStrategy: reconnect.retryStrategy,
  });
  subscriber.on('error', (err) => deps.onConnectionError(err, 'bullmq cancel subscriber'));
  subscriber.on('message', (_channel: string, jobId: string) => {
    worker.cancelJob(jobId, CANCEL_REASON);
  });
  try {
    await subscriber.subscribe(keys.cancelChannel);
    await worker.waitUntilReady();
    if (opts.announce !== undefined) {
      const b = new WorkerBeat(
        deps.commands,
        deps.workerKeys,
        worker.id,
        concurrency,
        opts.announce,
        deps.heartbeatMs,
        // A heartbeat fails every few seconds through an outage: counted as connection errors are.
        deps.onConnectionError,
      );
      await b.beat();
      beat = b;
    }
  } catch (err) {
    reconnect.close();
    subscriber.disconnect();
    await worker.close(true);
    throw err;
  }

  /** Cuts every connection of this worker (a close waiting on a silent Redis ends). */
  const cut = (): void => {
    reconnect.close();
    cutClient(subscriber);
    // Both at once (BullMQ's own disconnect waits for the main connection's end first).
    cutBackend(worker.backend);
  };
  let graceful: Promise<void> | undefined;
  /** The close without a bound (the queue's close bounds its workers' together). */
  const closeGracefully = (): Promise<void> => {
    graceful ??= (async () => {
      reconnect.close();
      await worker.close();
      // Found silent: the record lapses with its TTL (unregistering would only time out).
      await beat?.stop({ unregister: !deps.silence.found });
      subscriber.disconnect();
    })();
    return graceful;
  };
  let closing: Promise<void> | undefined;
  return {
    id: worker.id,
    idle: () => running.idle(),
    cut,
    closeGracefully,
    close: () => {
      closing ??= closeWithin({
        graceful: closeGracefully(),
        idle: () => running.idle(),
        cut,
        onCut: (ms) => deps.onError(silentRedis(ms), `closing worker ${worker.id}`),
        silenceMs: deps.closeSilenceMs,
        silence: deps.silence,
      }).then(() => undefined);
      return closing;
    },
  };
}
