/**
 * The job queue on Redis through BullMQ (when REDIS_URL is set): `phasebridge worker` processes
 * may run on other machines. Outcomes travel through BullMQ's QueueEvents stream; per-run
 * exclusion and cross-process cancel are added by bullmq-worker.ts and bullmq-redis.ts.
 */
import { randomUUID } from 'node:crypto';
import { Queue, QueueEvents } from 'bullmq';
import { Redis } from 'ioredis';
import { ConflictError } from '../../errors.ts';
import {
  CLOSE_SILENCE_MS,
  closeWithin,
  cutBackend,
  cutClient,
  endClient,
  RedisSilence,
  silentRedis,
} from './bullmq-close.ts';
import {
  type BullJobData,
  completedOutcome,
  decodeFailure,
  decodeSignal,
  specFromId,
  stateOf,
} from './bullmq-codec.ts';
import { bullJobCounts, bullListJobs } from './bullmq-listing.ts';
import { type BullmqQueueOptions, DEFAULT_COMMAND_TIMEOUT_MS } from './bullmq-options.ts';
import { ReconnectPolicy } from './bullmq-reconnect.ts';
import { assertRedisReachable, QueueKeys, RunLocks } from './bullmq-redis.ts';
import { DEFAULT_BULLMQ_RETENTION, keepJobsOf } from './bullmq-retention.ts';
import {
  type BullmqTiming,
  type BullmqWorker,
  type BullmqWorkerDeps,
  startBullmqWorker,
} from './bullmq-worker.ts';
import { listWorkers, WORKER_HEARTBEAT_MS, WorkerKeys } from './bullmq-workers.ts';
import { fixDisconnectWhileReconnecting } from './ioredis-disconnect.ts';
import { OutcomeListeners, warnOnError } from './outcome.ts';
import {
  assertConcurrency,
  delayOf,
  type JobListing,
  type JobListState,
  type JobOutcome,
  type JobQueue,
  type JobSpec,
  type JobState,
  type JobStatus,
  type OutcomeListener,
  type Processor,
  type ProgressListener,
  type RemoveJobResult,
  type StartedListener,
  validateJobSpec,
  type Worker,
  type WorkerInfo,
  type WorkerOptions,
} from './port.ts';
import { quietRepeats } from './repeated-errors.ts';
import { SignalListeners } from './signals.ts';

/** How long a cancelled job's marker is kept (refuses its start and its re-enqueue). */
const CANCEL_MARK_TTL_MS = 30 * 24 * 3600 * 1000;

/** Checks that Redis answers (ConfigError otherwise) and opens the queue. */
export async function createBullmqQueue(opts: BullmqQueueOptions): Promise<JobQueue> {
  fixDisconnectWhileReconnecting();
  await assertRedisReachable(opts.url);
  const prefix = opts.prefix ?? 'phasebridge';
  const queueName = opts.queueName ?? 'phasebridge-jobs';
  const keys = new QueueKeys(prefix, queueName);
  const onError = opts.onError ?? warnOnError;
  const commandTimeout = opts.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS;
  // connectTimeout too: a reconnect into a network that drops packets must fail as well.
  // Every connection reconnects until the queue closes (bullmq-reconnect.ts: a close must end).
  const reconnect = new ReconnectPolicy();
  const bounded = {
    commandTimeout,
    connectTimeout: Math.max(commandTimeout, 1_000),
    retryStrategy: reconnect.retryStrategy,
  };
  const commands = new Redis(opts.url, bounded);
  // An outage errs on every connection at every reconnect: its repeats are counted, not each logged.
  const onConnectionError = quietRepeats(onError);
  commands.on('error', (err) => onConnectionError(err, 'bullmq driver connection'));
  const lockDurationMs = opts.lockDurationMs ?? 30_000;
  const deps: BullmqWorkerDeps = {
    url: opts.url,
    // Blocking connections (Worker, QueueEvents) must never give up on a command; BullMQ checks it.
    connection: {
      url: opts.url,
      maxRetriesPerRequest: null,
      retryStrategy: reconnect.retryStrategy,
    },
    reconnect,
    prefix,
    queueName,
    keys,
    commands,
    runLocks: new RunLocks(commands, keys, lockDurationMs),
    timing: {
      lockDurationMs,
      stalledIntervalMs: opts.stalledIntervalMs ?? 30_000,
      maxStalledCount: opts.maxLostRetries ?? 2,
      runBusyRetryMs: opts.runBusyRetryMs ?? 100,
    } satisfies BullmqTiming,
    onError,
    onConnectionError,
    workerKeys: new WorkerKeys(`${prefix}:${queueName}`),
    heartbeatMs: opts.workerHeartbeatMs ?? WORKER_HEARTBEAT_MS,
    closeSilenceMs: opts.closeSilenceMs ?? CLOSE_SILENCE_MS,
    silence: new RedisSilence(),
  };
  const keep = keepJobsOf({ ...DEFAULT_BULLMQ_RETENTION, ...opts.retention });
  // The Queue keeps ioredis' bounded retries: an enqueue during an outage fails instead of hanging;
  // the command timeout does the same when Redis is silent rather than gone.
  const queue = new Queue<BullJobData, Record<string, unknown>, 'step'>(queueName, {
    connection: { url: opts.url, ...bounded },
    prefix,
  });
  queue.on('error', (err) => onConnectionError(err, 'bullmq queue'));
  try {
    await queue.waitUntilReady();
    // Outcomes are those of jobs finishing from now on: remember where the event stream is.
    return new BullmqJobQueue(deps, queue, await lastEventId(commands, queue.keys.events), keep);
  } catch (err) {
    reconnect.close();
    await queue.close().catch(() => {});
    commands.disconnect();
    throw err;
  }
}

/** The id of the newest event in the queue's event stream ('0-0' when it is empty). */
async function lastEventId(commands: Redis, stream: string): Promise<string> {
  const last = await commands.xrevrange(stream, '+', '-', 'COUNT', 1);
  return last[0]?.[0] ?? '0-0';
}

class BullmqJobQueue implements JobQueue {
  readonly driver = 'bullmq' as const;
  private readonly listeners: OutcomeListeners;
  private readonly signals: SignalListeners;
  private readonly started = new Set<BullmqWorker>();
  private events: QueueEvents | undefined;
  /** Outcomes are handed to listeners in stream order even though each needs a lookup. */
  private delivery: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(
    private readonly deps: BullmqWorkerDeps,
    private readonly queue: Queue<BullJobData, Record<string, unknown>, 'step'>,
    private startEventId: string,
    private readonly keep: ReturnType<typeof keepJobsOf>,
  ) {
    this.listeners = new OutcomeListeners(deps.onError);
    this.signals = new SignalListeners(deps.onError);
  }

  async counts(): Promise<Partial<Record<JobState, number>>> {
    const c = await this.queue.getJobCounts('waiting', 'delayed', 'active', 'completed', 'failed');
    // Delayed jobs (retry backoff) wait too, in our words.
    return {
      waiting: (c.waiting ?? 0) + (c.delayed ?? 0),
      active: c.active ?? 0,
      completed: c.completed ?? 0,
      failed: c.failed ?? 0,
    };
  }

  async jobCounts(): Promise<Record<JobListState, number>> {
    return bullJobCounts(this.queue);
  }

  async listJobs(state: JobListState, limit: number): Promise<JobListing[]> {
    return bullListJobs(this.queue, state, limit);
  }

  async removeJob(id: string): Promise<RemoveJobResult> {
    this.assertOpen();
    const job = await this.queue.getJob(id);
    if (job === undefined) return 'not-found';
    const state = await job.getState();
    if (state === 'active') return 'active';
    if (!['waiting', 'delayed', 'prioritized'].includes(state)) return 'not-found';
    // As cancel of a waiting job: marked first, so a worker taking it meanwhile refuses it.
    return (await this.cancel(id)) === 'removed' ? 'removed' : 'active';
  }

  async enqueue(
    job: JobSpec,
    opts?: { delayMs?: number },
  ): Promise<{ id: string; created: boolean }> {
    this.assertOpen();
    const { id } = validateJobSpec(job);
    const delay = delayOf(opts);
    if ((await this.deps.commands.exists(this.deps.keys.cancelled(id))) === 1)
      return { id, created: false };
    const spec: JobSpec = {
      runId: job.runId,
      stepId: job.stepId,
      attempt: job.attempt,
      payload: job.payload,
    };
    const nonce = randomUUID();
    // BullMQ ignores an add whose jobId exists; the stored nonce tells whether ours won.
    await this.queue.add('step', { spec, nonce }, { jobId: id, delay, attempts: 1, ...this.keep });
    const stored = await this.queue.getJob(id);
    return { id, created: stored?.data.nonce === nonce };
  }

  async cancel(id: string): Promise<'removed' | 'aborted' | 'not-found'> {
    this.assertOpen();
    const job = await this.queue.getJob(id);
    if (job === undefined) return 'not-found';
    const state = await job.getState();
    if (state === 'completed' || state === 'failed' || state === 'unknown') return 'not-found';
    // Marked first: a worker picking the job up meanwhile refuses to start it.
    await this.deps.commands.set(this.deps.keys.cancelled(id), '1', 'PX', CANCEL_MARK_TTL_MS);
    if (state !== 'active' && (await this.queue.remove(id)) === 1) return 'removed';
    await this.deps.commands.publish(this.deps.keys.cancelChannel, id);
    return 'aborted';
  }

  async outcomesFromNow(): Promise<void> {
    if (this.events) throw new ConflictError('the queue already reports outcomes');
    this.startEventId = await lastEventId(this.deps.commands, this.queue.keys.events);
  }

  onOutcome(listener: OutcomeListener): () => void {
    this.assertOpen();
    const off = this.listeners.add(listener);
    this.events ??= this.openEvents();
    return off;
  }

  onStarted(listener: StartedListener): () => void {
    this.assertOpen();
    const off = this.signals.addStarted(listener);
    this.events ??= this.openEvents();
    return off;
  }

  onProgress(listener: ProgressListener): () => void {
    this.assertOpen();
    const off = this.signals.addProgress(listener);
    this.events ??= this.openEvents();
    return off;
  }

  /** Registered workers of this queue in any process (see bullmq-workers.ts). */
  async listWorkers(): Promise<WorkerInfo[]> {
    return listWorkers(this.deps.commands, this.deps.workerKeys);
  }

  async startWorker(processor: Processor, opts: WorkerOptions): Promise<Worker> {
    this.assertOpen();
    assertConcurrency(opts.concurrency);
    const worker = await startBullmqWorker(this.deps, processor, opts);
    this.started.add(worker);
    return {
      id: worker.id,
      close: async () => {
        await worker.close();
        this.started.delete(worker);
      },
    };
  }

  async get(id: string): Promise<JobStatus | null> {
    // State before data: a job read as it finished was once "completed" with the result not yet
    // in the data read before it (the step failed "unreadable result"). Finished is final, so data
    // read after a finished state holds its outcome; a state read early is only stale, not torn.
    const bullState = await this.queue.getJobState(id);
    const job = await this.queue.getJob(id);
    if (job === undefined) {
      if ((await this.deps.commands.exists(this.deps.keys.cancelled(id))) === 0) return null;
      const outcome: JobOutcome = { ok: false, error: 'cancelled before start', cancelled: true };
      return { id, state: 'cancelled', attempts: 0, outcome };
    }
    let outcome: JobOutcome | undefined;
    if (bullState === 'completed') outcome = completedOutcome(job.returnvalue);
    if (bullState === 'failed') outcome = decodeFailure(job.failedReason);
    const state = stateOf(bullState, outcome);
    const attempts = job.stalledCounter + (state === 'waiting' ? 0 : 1);
    return outcome === undefined ? { id, state, attempts } : { id, state, attempts, outcome };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    // A connection lost from now on is not made again: with Redis gone, the close ends. Ours,
    // already lost (waiting to reconnect, or trying), ends now: the workers' last writes fail at
    // once, not after the command timeout (BullMQ's end at their next attempt, bullmq-reconnect.ts).
    this.deps.reconnect.close();
    if (this.deps.commands.status !== 'ready') this.deps.commands.disconnect();
    const workers = [...this.started];
    const cut = (): void => {
      for (const w of workers) w.cut();
      if (this.events) cutBackend(this.events.backend);
      cutBackend(this.queue.backend);
      cutClient(this.deps.commands);
    };
    const graceful = (async () => {
      await Promise.all(workers.map((w) => w.closeGracefully()));
      this.started.clear();
      await this.events?.close();
      await this.delivery;
      await this.queue.close();
    })();
    let ended: 'closed' | 'cut' | 'failed' = 'failed';
    try {
      // A silent Redis (dropped packets) never answers BullMQ's QUIT: bounded (bullmq-close.ts).
      ended = await closeWithin({
        graceful,
        idle: async () => {
          await Promise.all(workers.map((w) => w.idle()));
        },
        cut,
        onCut: (ms) => this.deps.onError(silentRedis(ms), 'closing the queue'),
        silenceMs: this.deps.closeSilenceMs,
        silence: this.deps.silence,
      });
    } finally {
      // A close that failed on the way (a QUIT timed out) leaves no connection of ours open.
      if (ended === 'failed') cut();
      endClient(this.deps.commands);
    }
  }

  private openEvents(): QueueEvents {
    const events = new QueueEvents(this.deps.queueName, {
      connection: this.deps.connection,
      prefix: this.deps.prefix,
      lastEventId: this.startEventId,
    });
    events.on('error', (err) => this.deps.onConnectionError(err, 'bullmq queue events'));
    events.on('completed', ({ jobId, returnvalue }) =>
      this.deliver(jobId, completedOutcome(returnvalue)),
    );
    events.on('failed', ({ jobId, failedReason }) =>
      this.deliver(jobId, decodeFailure(failedReason)),
    );
    events.on('progress', ({ jobId, data }) => this.deliverSignal(jobId, data));
    return events;
  }

  /** A started/progress signal, in stream order with outcomes. */
  private deliverSignal(id: string, value: unknown): void {
    const signal = decodeSignal(value);
    if (signal === null || this.signals.size === 0) return;
    this.delivery = this.delivery
      .then(async () => {
        const job = await this.queue.getJob(id);
        const spec = job?.data.spec ?? specFromId(id);
        if (signal.type === 'started') this.signals.emitStarted(id, spec);
        else this.signals.emitProgress(id, spec, signal.data);
      })
      .catch((err: unknown) => this.deps.onError(err, `delivering a signal of job ${id}`));
  }

  private deliver(id: string, outcome: JobOutcome): void {
    this.delivery = this.delivery
      .then(async () => {
        const job = await this.queue.getJob(id);
        this.listeners.emit(id, job?.data.spec ?? specFromId(id), outcome);
      })
      .catch((err: unknown) => this.deps.onError(err, `delivering the outcome of job ${id}`));
  }

  private assertOpen(): void {
    // A programming error (use after close), not a user-facing condition.
    if (this.closed) throw new Error('job queue is closed');
  }
}
