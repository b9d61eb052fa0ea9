/**
 * How the BullMQ driver stores jobs and failures: BullMQ keeps a failure as one string
 * (`failedReason`), so a cancel is marked by a prefix, and its stalled-limit failure means lost.
 */
import { type JobOutcome, type JobSpec, type JobState, parseJobId } from './port.ts';

/** The data of a BullMQ job. `nonce` tells an enqueue whether it created the job or found it. */
export interface BullJobData {
  spec: JobSpec;
  nonce: string;
}

/** Prefix of the failedReason of a cancelled job. */
export const CANCELLED_MARK = '[phasebridge:cancelled] ';

/** The failedReason BullMQ writes when a job stalled more than `maxStalledCount` times. */
export const STALLED_LIMIT_REASON = 'job stalled more than allowable limit';

/** The failedReason to store for a failed outcome. */
export function encodeFailure(outcome: Extract<JobOutcome, { ok: false }>): string {
  return outcome.cancelled ? `${CANCELLED_MARK}${outcome.error}` : outcome.error;
}

/** The failed outcome a failedReason stands for. */
export function decodeFailure(reason: string | undefined): Extract<JobOutcome, { ok: false }> {
  const text = reason ?? 'failed';
  if (text.startsWith(CANCELLED_MARK)) {
    return { ok: false, error: text.slice(CANCELLED_MARK.length), cancelled: true };
  }
  if (text === STALLED_LIMIT_REASON) {
    return { ok: false, error: `lost: ${STALLED_LIMIT_REASON} (worker died or hung)`, lost: true };
  }
  return { ok: false, error: text };
}

/** A completed job's outcome from its stored return value. */
export function completedOutcome(returnvalue: unknown): JobOutcome {
  const ok = returnvalue !== null && typeof returnvalue === 'object' && !Array.isArray(returnvalue);
  return { ok: true, result: ok ? (returnvalue as Record<string, unknown>) : {} };
}

/** Our five states from BullMQ's (delayed, prioritized and waiting-children count as waiting). */
export function stateOf(bullState: string, outcome: JobOutcome | undefined): JobState {
  if (bullState === 'completed') return 'completed';
  if (bullState === 'failed')
    return outcome !== undefined && !outcome.ok && outcome.cancelled ? 'cancelled' : 'failed';
  if (bullState === 'active') return 'active';
  return 'waiting';
}

/** The spec of a job whose data is gone, rebuilt from its id (payload unknown). */
export function specFromId(id: string): JobSpec {
  const parts = parseJobId(id);
  return parts === null
    ? { runId: id, stepId: '', attempt: 0, payload: {} }
    : { ...parts, payload: {} };
}

/** Key marking our signals in a BullMQ job's progress value. */
export const SIGNAL_KEY = 'phasebridge';

/** A signal sent through BullMQ's progress events (a taken job, or a processor's report). */
export type BullSignal = { type: 'started' } | { type: 'progress'; data: Record<string, unknown> };

/** The progress value that carries a signal. */
export function encodeSignal(signal: BullSignal): Record<string, unknown> {
  return signal.type === 'started'
    ? { [SIGNAL_KEY]: 'started' }
    : { [SIGNAL_KEY]: 'progress', data: signal.data };
}

/** The signal a progress value carries, or null for anything else. */
export function decodeSignal(value: unknown): BullSignal | null {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return null;
  const v = value as Record<string, unknown>;
  if (v[SIGNAL_KEY] === 'started') return { type: 'started' };
  const data = v.data;
  if (v[SIGNAL_KEY] !== 'progress' || data === null || typeof data !== 'object') return null;
  return Array.isArray(data) ? null : { type: 'progress', data: data as Record<string, unknown> };
}
