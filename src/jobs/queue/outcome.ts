/**
 * Pieces shared by both drivers: running a processor into a JobOutcome, and fanning outcomes
 * out to listeners without letting one listener's exception break the queue.
 */
import {
  CANCEL_REASON,
  type JobOutcome,
  type JobSpec,
  type OutcomeListener,
  type Processor,
  type ProgressReporter,
  type QueuedJob,
} from './port.ts';

/** Where a driver reports errors it cannot throw (listener exceptions, heartbeat failures). */
export type ErrorReporter = (err: unknown, context: string) => void;

/** The default reporter: a process warning on stderr, so nothing is silently swallowed. */
export const warnOnError: ErrorReporter = (err, context) => {
  process.emitWarning(`${context}: ${errorMessage(err)}`, { code: 'PHASEBRIDGE_QUEUE' });
};

/** The message of a thrown value. */
export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** True when `signal` was aborted by `cancel` (and not, say, by a lost lease). */
export function isCancelAbort(signal: AbortSignal): boolean {
  return signal.aborted && signal.reason === CANCEL_REASON;
}

/**
 * Calls the processor and turns what happened into an outcome: a cancel abort wins over a late
 * result (the user asked to stop); a non-object or non-JSON result is a failure, since the
 * result must survive storage.
 */
export async function runToOutcome(
  processor: Processor,
  job: QueuedJob,
  signal: AbortSignal,
  report: ProgressReporter = () => {},
): Promise<JobOutcome> {
  let outcome: JobOutcome;
  try {
    const result = await processor(job, signal, report);
    outcome = checkResult(result);
  } catch (err) {
    outcome = { ok: false, error: errorMessage(err) };
  }
  if (isCancelAbort(signal)) return { ok: false, error: 'cancelled', cancelled: true };
  return outcome;
}

function checkResult(result: unknown): JobOutcome {
  if (result === null || typeof result !== 'object' || Array.isArray(result)) {
    return { ok: false, error: 'processor returned no JSON object' };
  }
  try {
    // Round-trip so both drivers hand listeners the same plain data.
    return { ok: true, result: JSON.parse(JSON.stringify(result)) as Record<string, unknown> };
  } catch (err) {
    return { ok: false, error: `processor result is not JSON: ${errorMessage(err)}` };
  }
}

/** The listeners of one queue instance. */
export class OutcomeListeners {
  private readonly listeners = new Set<OutcomeListener>();

  constructor(private readonly onError: ErrorReporter) {}

  /** Number of subscribed listeners. */
  get size(): number {
    return this.listeners.size;
  }

  /** Adds a listener; returns its unsubscribe function. */
  add(listener: OutcomeListener): () => void {
    const wrapped: OutcomeListener = (id, job, outcome) => listener(id, job, outcome);
    this.listeners.add(wrapped);
    return () => {
      this.listeners.delete(wrapped);
    };
  }

  /** Calls every listener; an exception is reported, never propagated. */
  emit(id: string, job: JobSpec, outcome: JobOutcome): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(id, job, outcome);
      } catch (err) {
        this.onError(err, `outcome listener failed for job ${id}`);
      }
    }
  }
}

/** Columns of the jobs table filled from an agent runner result when it carries them. */
export interface ResultColumns {
  exitCode: number | null;
  tokensIn: number | null;
  tokensOut: number | null;
  costUsd: number | null;
}

/**
 * Reads `exitCode` and `telemetry.{tokensIn,tokensOut,costUsd}` (the agent runner's result
 * shape) so bridge.db can report usage without parsing result_json; absent values are null.
 */
export function resultColumnsOf(result: Record<string, unknown> | undefined): ResultColumns {
  const telemetry = result?.telemetry;
  const t =
    telemetry !== null && typeof telemetry === 'object'
      ? (telemetry as Record<string, unknown>)
      : {};
  return {
    exitCode: intOrNull(result?.exitCode),
    tokensIn: intOrNull(t.tokensIn),
    tokensOut: intOrNull(t.tokensOut),
    costUsd: typeof t.costUsd === 'number' && Number.isFinite(t.costUsd) ? t.costUsd : null,
  };
}

function intOrNull(value: unknown): number | null {
  return typeof value === 'number' && Number.isSafeInteger(value) ? value : null;
}
