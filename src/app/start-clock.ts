/**
 * Where a bridge's start-up goes, step by step, at debug level: one line per step with its own
 * time and the time since the clock started. A takeover (serve-ha.ts) starts the clock when the
 * standby wins the lease, so the lines say what stood between the lease and `/readyz` saying
 * leader (docs/operations.md, "When the lease is free").
 */
import type { Log } from '../log.ts';

/** Marks the end of each step of a start. */
export interface StartClock {
  /** Logs that `step` is done: its own ms and the ms since the clock started. */
  mark(step: string): void;
}

/** A clock started now; `what` names the start in every line ("takeover", "bridge start"). */
export function startClock(log: Log, what: string): StartClock {
  const t0 = performance.now();
  let last = t0;
  return {
    mark(step) {
      if (!log.isLevelEnabled('debug')) return;
      const now = performance.now();
      log.debug({ step, ms: Math.round(now - last), sinceStartMs: Math.round(now - t0) }, what);
      last = now;
    },
  };
}
