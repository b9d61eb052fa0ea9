/**
 * The job queue port: what the engine's caller needs from a queue, whatever the driver.
 * Drivers: `sqlite` (embedded, bridge.db `jobs` table with leases) and `bullmq` (Redis).
 * Both pass the same contract suite (test/jobs/queue/contract.ts).
 */
import { InvalidInputError } from '../../errors.ts';

/** One step execution to run; its id is derived, so a duplicate enqueue is a no-op. */
export interface JobSpec {
  runId: string;
  stepId: string;
  attempt: number;
  /** Plain JSON handed to the processor unchanged. */
  payload: Record<string, unknown>;
}

/** A job as a processor receives it. */
export type QueuedJob = JobSpec & { id: string };

/** The job id `runId:stepId:attempt` (the idempotency key of an enqueue). */
export const jobIdOf = (j: Pick<JobSpec, 'runId' | 'stepId' | 'attempt'>): string =>
  `${j.runId}:${j.stepId}:${j.attempt}`;

/** What marks the queue step id of a task job of a parallel `tasks` step. */
export const TASK_LANE_MARK = '+task+';

/**
 * The lane a job runs in: at most one job of a lane runs at a time. A run is one lane, except the
 * task jobs of a `tasks` step: each task is its own lane (`runId:stepId+task+taskId`), so a run's
 * tasks run in parallel on every worker while one task never runs twice at once.
 */
export function laneOf(j: Pick<JobSpec, 'runId' | 'stepId'>): string {
  return j.stepId.includes(TASK_LANE_MARK) ? `${j.runId}:${j.stepId}` : j.runId;
}

/**
 * The result of a job. `lost`: the worker process died more often than the queue retries
 * (infrastructure failure, not the agent's). `cancelled`: a running job was aborted by `cancel`.
 */
export type JobOutcome =
  | { ok: true; result: Record<string, unknown> }
  | { ok: false; error: string; lost?: boolean; cancelled?: boolean };

/**
 * Sends JSON data about the running job to every process listening with `onProgress` (best
 * effort: never throws; data that is not a JSON object is dropped and reported as an error).
 */
export type ProgressReporter = (data: Record<string, unknown>) => void;

/**
 * Runs one job; must stop (reject or resolve) soon after `signal` aborts. `report` publishes
 * progress data (see {@link JobQueue.onProgress}).
 */
export type Processor = (
  job: QueuedJob,
  signal: AbortSignal,
  report: ProgressReporter,
) => Promise<Record<string, unknown>>;

/** Called once per finished job, in every process that listens (see `onOutcome`). */
export type OutcomeListener = (id: string, job: JobSpec, outcome: JobOutcome) => void;

/** Called when a worker (in any process) starts running a job. */
export type StartedListener = (id: string, job: JobSpec) => void;

/** Called with each progress report of a running job's processor (in any process). */
export type ProgressListener = (id: string, job: JobSpec, data: Record<string, unknown>) => void;

/** Where a job is; both drivers report these five. */
export type JobState = 'waiting' | 'active' | 'completed' | 'failed' | 'cancelled';

/** What `get` tells about a job. `attempts`: times a worker started it (1 + infrastructure retries). */
export interface JobStatus {
  id: string;
  state: JobState;
  attempts?: number;
  /** Set once the job is finished (completed, failed or cancelled). */
  outcome?: JobOutcome;
}

/** The lists of the console's queue page: `delayed` waits for its time, `waiting` for a worker. */
export const JOB_LIST_STATES = ['waiting', 'active', 'delayed', 'failed', 'completed'] as const;

/** One of JOB_LIST_STATES (a cancelled job is listed as failed, marked `cancelled`). */
export type JobListState = (typeof JOB_LIST_STATES)[number];

/** A job as the queue page lists it (times in ms since the epoch). */
export interface JobListing {
  id: string;
  runId: string;
  stepId: string;
  attempt: number;
  state: JobListState;
  /** Times a worker took it. */
  attempts: number;
  createdAt: number;
  /** When a delayed job becomes available. */
  availableAt?: number;
  startedAt?: number;
  finishedAt?: number;
  /** Why a failed job failed. */
  error?: string;
  cancelled?: boolean;
  /** A completed job's `exitCode` result (a step whose agent exited non-zero completed too). */
  exitCode?: number;
}

/** What `removeJob` did: gone for good, still running (refused: cancel the run), or unknown. */
export type RemoveJobResult = 'removed' | 'active' | 'not-found';

/** What `reclaim` did: taken back, still held by a live worker (named), or not running. */
export type ReclaimResult =
  | { kind: 'reclaimed' }
  | { kind: 'held'; by: string }
  | { kind: 'not-active' };

/** What a worker tells the worker registry (BullMQ): who it is and what it takes. */
export interface WorkerAnnouncement {
  labels: readonly string[];
  /** Engines it runs; absent = all. */
  engines?: readonly string[];
  /** The bridge's own worker (serve or a CLI command), not a `phasebridge worker`. */
  inProcess?: boolean;
}

/** A registered worker as the bridge lists it (doctor, /metrics, console). */
export interface WorkerInfo {
  id: string;
  host: string;
  pid: number;
  labels: string[];
  engines?: string[];
  inProcess: boolean;
  concurrency: number;
  /** Ids of the jobs it runs now. */
  running: string[];
  startedAt: string;
  /** Its last heartbeat. */
  seenAt: string;
}

/** Options of `startWorker`. */
export interface WorkerOptions {
  concurrency: number;
  /**
   * Whether this worker takes a job (labels, engine allowlist); a job it refuses is left for
   * other workers (BullMQ: put back with a short delay). Default: every job.
   */
  accepts?(job: QueuedJob): boolean;
  /** Registers the worker (heartbeat, labels, running jobs) where the driver can (BullMQ). */
  announce?: WorkerAnnouncement;
}

/** A running worker; `close` stops taking jobs and waits for the running ones to settle. */
export interface Worker {
  readonly id: string;
  close(): Promise<void>;
}

/**
 * A job queue. Guarantees (both drivers): idempotent enqueue by id; at most `concurrency` jobs
 * per worker; at most ONE running job per lane (a run, or one task of a run: see laneOf); `delayMs` honoured; a job whose worker process
 * died is taken again (a bounded number of times, then failed with `lost: true`), never run
 * twice at the same time. Cancelling a waiting job removes it and reports NO outcome (the
 * 'removed' answer is the report); cancelling a running job aborts its signal and reports
 * `{ ok: false, cancelled: true }`. Outcomes are reported for jobs finishing after the queue
 * was created; after a restart, use `get` to learn what finished meanwhile.
 *
 * Started and progress signals are best effort, for live views: a job taken again after a
 * crash reports `started` again; a listener in another process may get consecutive progress
 * reports coalesced to the latest (sqlite polls) and may miss the signals of a job that
 * finished between two polls. Outcomes are the reliable record.
 */
export interface JobQueue {
  readonly driver: 'sqlite' | 'bullmq';
  /** Adds a job unless one with its id exists (in any state); `created` says which. */
  enqueue(job: JobSpec, opts?: { delayMs?: number }): Promise<{ id: string; created: boolean }>;
  /** 'removed': was waiting, will never run; 'aborted': running, its signal is aborted; 'not-found': unknown or finished. */
  cancel(id: string): Promise<'removed' | 'aborted' | 'not-found'>;
  /** Subscribes to outcomes of jobs run by any worker process; returns the unsubscribe function. */
  onOutcome(listener: OutcomeListener): () => void;
  /**
   * Outcomes reported are those of jobs finishing from now on, not from when the queue was
   * opened (a standby opens it long before it leads); only before the first subscription.
   */
  outcomesFromNow?(): Promise<void>;
  /** Subscribes to job starts by any worker process; returns the unsubscribe function. */
  onStarted(listener: StartedListener): () => void;
  /** Subscribes to progress reports of running jobs (any process); returns the unsubscribe function. */
  onProgress(listener: ProgressListener): () => void;
  /** Starts processing in this process (also used by `phasebridge worker` in another process). */
  startWorker(processor: Processor, opts: WorkerOptions): Promise<Worker>;
  /** Workers alive now (heartbeat within the registry's TTL); drivers without a registry leave it out. */
  listWorkers?(): Promise<WorkerInfo[]>;
  /** The job's state, or null when unknown. */
  get(id: string): Promise<JobStatus | null>;
  /**
   * Hands a running job whose worker process is gone back to the queue now, instead of when
   * its lease runs out (`resume` of an interrupted run). Drivers that cannot tell leave it out.
   */
  reclaim?(id: string): Promise<ReclaimResult>;
  /** Jobs by state (queue depth for metrics); drivers that cannot count cheaply leave it out. */
  counts?(): Promise<Partial<Record<JobState, number>>>;
  /** How many jobs each list of the queue page holds. */
  jobCounts(): Promise<Record<JobListState, number>>;
  /**
   * Up to `limit` jobs of one list, in the order they matter: waiting oldest first, delayed
   * soonest first, active longest running first, failed and completed newest finished first.
   */
  listJobs(state: JobListState, limit: number): Promise<JobListing[]>;
  /**
   * Removes a job that is not running (waiting, delayed or finished): it never runs and is no
   * longer listed; no outcome is reported (as `cancel` of a waiting job). A running one is refused.
   */
  removeJob(id: string): Promise<RemoveJobResult>;
  /** Closes workers (waiting for running jobs) and connections this queue opened. */
  close(): Promise<void>;
}

/** The abort reason given to a processor whose job was cancelled. */
export const CANCEL_REASON = 'phasebridge: job cancelled';

/**
 * Checks a spec before it is queued and returns its id and payload JSON. Throws InvalidInputError
 * for ids containing ':' (it separates the id's parts), a bad attempt or a non-JSON payload.
 */
export function validateJobSpec(job: JobSpec): { id: string; payloadJson: string } {
  for (const [name, value] of [
    ['runId', job.runId],
    ['stepId', job.stepId],
  ] as const) {
    if (typeof value !== 'string' || value === '' || value.includes(':')) {
      throw new InvalidInputError(
        `job ${name} must be a non-empty string without ':' (got '${value}')`,
      );
    }
  }
  if (!Number.isSafeInteger(job.attempt) || job.attempt < 0) {
    throw new InvalidInputError(`job attempt must be a non-negative integer (got ${job.attempt})`);
  }
  if (job.payload === null || typeof job.payload !== 'object' || Array.isArray(job.payload)) {
    throw new InvalidInputError('job payload must be a JSON object');
  }
  let payloadJson: string;
  try {
    payloadJson = JSON.stringify(job.payload);
  } catch (err) {
    throw new InvalidInputError(`job payload is not JSON: ${(err as Error).message}`);
  }
  return { id: jobIdOf(job), payloadJson };
}

/** Throws InvalidInputError unless `delayMs` is absent or a finite number >= 0. */
export function delayOf(opts?: { delayMs?: number }): number {
  const delay = opts?.delayMs ?? 0;
  if (!Number.isFinite(delay) || delay < 0) {
    throw new InvalidInputError(`delayMs must be a finite number >= 0 (got ${delay})`);
  }
  return Math.ceil(delay);
}

/** Throws InvalidInputError unless `concurrency` is an integer >= 1. */
export function assertConcurrency(concurrency: number): void {
  if (!Number.isSafeInteger(concurrency) || concurrency < 1) {
    throw new InvalidInputError(`worker concurrency must be an integer >= 1 (got ${concurrency})`);
  }
}

/** Parses `runId:stepId:attempt`; null when `id` has another shape. */
export function parseJobId(id: string): { runId: string; stepId: string; attempt: number } | null {
  const parts = id.split(':');
  if (parts.length !== 3) return null;
  const [runId, stepId, attemptText] = parts as [string, string, string];
  const attempt = Number(attemptText);
  if (runId === '' || stepId === '' || !Number.isSafeInteger(attempt)) return null;
  return { runId, stepId, attempt };
}
