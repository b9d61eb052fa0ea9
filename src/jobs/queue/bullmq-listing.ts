/**
 * The queue page's view of the BullMQ queue: counts and lists by JOB_LIST_STATES from BullMQ's
 * own lists (prioritized jobs wait too). A job cancelled while it ran is a failed job
 * with the cancel mark; one removed before it started is gone from Redis.
 */
import type { Job, JobType, Queue } from 'bullmq';
import { type BullJobData, decodeFailure, specFromId } from './bullmq-codec.ts';
import type { JobListing, JobListState } from './port.ts';

type StepQueue = Queue<BullJobData, Record<string, unknown>, 'step'>;

const TYPES: Record<JobListState, JobType[]> = {
  waiting: ['wait', 'prioritized'],
  active: ['active'],
  delayed: ['delayed'],
  failed: ['failed'],
  completed: ['completed'],
};

/** Oldest first for the lists a worker takes from; newest finished first for the others. */
const OLDEST_FIRST: Record<JobListState, boolean> = {
  waiting: true,
  active: true,
  delayed: true,
  failed: false,
  completed: false,
};

/** How many jobs each list holds. */
export async function bullJobCounts(queue: StepQueue): Promise<Record<JobListState, number>> {
  const c = await queue.getJobCounts(
    'wait',
    'prioritized',
    'active',
    'delayed',
    'failed',
    'completed',
  );
  return {
    waiting: (c.wait ?? 0) + (c.prioritized ?? 0),
    active: c.active ?? 0,
    delayed: c.delayed ?? 0,
    failed: c.failed ?? 0,
    completed: c.completed ?? 0,
  };
}

/** Up to `limit` jobs of one list (see JobQueue.listJobs for the order). */
export async function bullListJobs(
  queue: StepQueue,
  state: JobListState,
  limit: number,
): Promise<JobListing[]> {
  const jobs = (await queue.getJobs(TYPES[state], 0, limit - 1, OLDEST_FIRST[state])) as (
    | Job<BullJobData>
    | undefined
  )[];
  return jobs
    .filter((j): j is Job<BullJobData> => j !== undefined && j.id !== undefined)
    .slice(0, limit)
    .map((j) => listingOf(j, state));
}

function listingOf(job: Job<BullJobData>, state: JobListState): JobListing {
  const spec = job.data?.spec ?? specFromId(job.id!);
  const failure = state === 'failed' ? decodeFailure(job.failedReason) : undefined;
  return {
    id: job.id!,
    runId: spec.runId,
    stepId: spec.stepId,
    attempt: spec.attempt,
    state,
    attempts: state === 'waiting' || state === 'delayed' ? 0 : job.stalledCounter + 1,
    createdAt: job.timestamp,
    ...(state === 'delayed' && { availableAt: job.timestamp + job.delay }),
    ...(job.processedOn !== undefined && { startedAt: job.processedOn }),
    ...(job.finishedOn !== undefined && state !== 'active' && { finishedAt: job.finishedOn }),
    ...(failure && { error: failure.error }),
    ...(failure?.cancelled && { cancelled: true }),
    ...(state === 'completed' && exitCodeOf(job.returnvalue)),
  };
}

function exitCodeOf(value: unknown): { exitCode?: number } {
  const code = (value as { exitCode?: unknown } | null)?.exitCode;
  return Number.isSafeInteger(code) ? { exitCode: code as number } : {};
}
