/**
 * Started and progress signals, shared by both drivers: the listener sets of one queue instance
 * (a listener's exception is reported, never propagated) and the check of report data.
 */
import { type ErrorReporter, errorMessage } from './outcome.ts';
import type { JobSpec, ProgressListener, StartedListener } from './port.ts';

/** The JSON text of progress data, or null (reported) when it is not a JSON object. */
export function progressJson(data: unknown, onError: ErrorReporter, id: string): string | null {
  if (data === null || typeof data !== 'object' || Array.isArray(data)) {
    onError(new Error('progress data must be a JSON object'), `job ${id}: progress dropped`);
    return null;
  }
  try {
    return JSON.stringify(data);
  } catch (err) {
    onError(err, `job ${id}: progress is not JSON, dropped`);
    return null;
  }
}

/** Parses stored progress text back into data (null for text that is not an object). */
export function parseProgress(text: string): Record<string, unknown> | null {
  try {
    const data: unknown = JSON.parse(text);
    return data !== null && typeof data === 'object' && !Array.isArray(data)
      ? (data as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}

/** The started and progress listeners of one queue instance. */
export class SignalListeners {
  readonly #started = new Set<StartedListener>();
  readonly #progress = new Set<ProgressListener>();

  constructor(private readonly onError: ErrorReporter) {}

  /** Number of subscribed listeners (both kinds). */
  get size(): number {
    return this.#started.size + this.#progress.size;
  }

  /** Adds a started listener; returns its unsubscribe function. */
  addStarted(listener: StartedListener): () => void {
    const wrapped: StartedListener = (id, job) => listener(id, job);
    this.#started.add(wrapped);
    return () => {
      this.#started.delete(wrapped);
    };
  }

  /** Adds a progress listener; returns its unsubscribe function. */
  addProgress(listener: ProgressListener): () => void {
    const wrapped: ProgressListener = (id, job, data) => listener(id, job, data);
    this.#progress.add(wrapped);
    return () => {
      this.#progress.delete(wrapped);
    };
  }

  /** Tells every started listener. */
  emitStarted(id: string, job: JobSpec): void {
    for (const listener of [...this.#started]) {
      try {
        listener(id, job);
      } catch (err) {
        this.onError(err, `started listener failed for job ${id}: ${errorMessage(err)}`);
      }
    }
  }

  /** Tells every progress listener. */
  emitProgress(id: string, job: JobSpec, data: Record<string, unknown>): void {
    for (const listener of [...this.#progress]) {
      try {
        listener(id, job, data);
      } catch (err) {
        this.onError(err, `progress listener failed for job ${id}: ${errorMessage(err)}`);
      }
    }
  }
}
