/**
 * How many and how old finished BullMQ jobs Redis keeps (`removeOnComplete` / `removeOnFail`).
 * Apart from the driver so the config side reads it without loading bullmq.
 */

/**
 * Finished jobs kept in Redis, so it does not grow forever: a finished job is dropped once it is
 * older than `ageMs` or beyond the newest `completed` (`failed`) ones. BullMQ applies it lazily,
 * when a later job of the same kind finishes. A job's outcome is read as it finishes, so only
 * `get` of a long-finished job (null then, as a pruned sqlite job) sees the difference.
 */
export interface BullmqRetention {
  /** Oldest finished job kept (ms; PHASEBRIDGE_RETAIN_JOBS, default 30 days). */
  readonly ageMs: number;
  /** Newest completed jobs kept (default 1000). */
  readonly completed: number;
  /** Newest failed jobs kept (default 5000: failures are what people look into). */
  readonly failed: number;
}

/** The retention when none is configured. */
export const DEFAULT_BULLMQ_RETENTION: BullmqRetention = Object.freeze({
  ageMs: 30 * 86_400_000,
  completed: 1000,
  failed: 5000,
});

/** BullMQ's `removeOnComplete` / `removeOnFail` of a retention (its age is in seconds). */
export function keepJobsOf(r: BullmqRetention): {
  removeOnComplete: { age: number; count: number };
  removeOnFail: { age: number; count: number };
} {
  const age = Math.max(1, Math.ceil(r.ageMs / 1000));
  return {
    removeOnComplete: { age, count: r.completed },
    removeOnFail: { age, count: r.failed },
  };
}
