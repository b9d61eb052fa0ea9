/**
 * What the console's queue page reads and changes, typed structurally so this folder imports
 * nothing of the job queue: the bridge implements it over its JobQueue (either driver) and the
 * audit log (src/app/console-queue.ts).
 */

/** The page's lists, in the order it shows them. */
export const QUEUE_LISTS = ['waiting', 'active', 'delayed', 'failed', 'completed'] as const;

/** One of QUEUE_LISTS. */
export type QueueListName = (typeof QUEUE_LISTS)[number];

/** A job as the page lists it (see the queue port's JobListing; times in ms). */
export interface QueueJobView {
  readonly id: string;
  readonly runId: string;
  readonly stepId: string;
  readonly attempt: number;
  readonly state: QueueListName;
  readonly attempts: number;
  readonly createdAt: number;
  readonly availableAt?: number;
  readonly startedAt?: number;
  readonly finishedAt?: number;
  readonly error?: string;
  readonly cancelled?: boolean;
  /** A completed job's exit code (non-zero: its step failed). */
  readonly exitCode?: number;
}

/** The queue page's source. */
export interface QueueSource {
  /** 'sqlite' or 'bullmq'. */
  readonly driver: string;
  counts(): Promise<Record<QueueListName, number>>;
  list(state: QueueListName, limit: number): Promise<readonly QueueJobView[]>;
  /**
   * Removes a job that has not started, audited (`queue:remove`) under `actor`; returns the
   * sentence to show. INVALID_INPUT refuses it (running, unknown or finished) and changes nothing.
   */
  remove(actor: string, jobId: string): Promise<string>;
  /** Records a queue action (`queue:retry`, a refused one) in the audit log under `actor`. */
  audit(
    actor: string,
    action: string,
    jobId: string,
    outcome: 'allowed' | 'refused',
    detail?: string,
  ): Promise<void>;
}
