/**
 * The orchestrator's subscribers: run updates (awaited, so the change feed moves its cursor only
 * after the chats were told), notices and progress lines. A failing listener is logged and never
 * keeps the others from hearing; one cut short by the bridge's stop makes the update undelivered.
 */
import type { RunState } from '../../engine/model.ts';
import { StoppingError } from '../../errors.ts';
import type { Log } from '../../log.ts';
import { errorMessage } from '../queue/outcome.ts';
import { isIdle } from './run-driver.ts';
import type { RunNotice, RunUpdate, StepProgress, UpdateListener } from './types.ts';

/** The three kinds of listeners and how each is told. */
export class RunListeners {
  readonly #log: Log;
  readonly #updates = new Set<UpdateListener>();
  readonly #notices = new Set<(n: RunNotice) => void>();
  readonly #progress = new Set<(p: StepProgress) => void>();
  readonly #waiters = new Set<(err: Error) => void>();

  constructor(log: Log) {
    this.#log = log;
  }

  /** Adds an update listener; returns the unsubscribe function. */
  onUpdate(listener: UpdateListener): () => void {
    this.#updates.add(listener);
    return () => this.#updates.delete(listener);
  }

  /** Adds a notice listener; returns the unsubscribe function. */
  onNotice(listener: (n: RunNotice) => void): () => void {
    this.#notices.add(listener);
    return () => this.#notices.delete(listener);
  }

  /** Adds a progress listener; returns the unsubscribe function. */
  onProgress(listener: (p: StepProgress) => void): () => void {
    this.#progress.add(listener);
    return () => this.#progress.delete(listener);
  }

  /** Tells every update listener; resolves once the work they returned is done. */
  async update(u: RunUpdate): Promise<void> {
    const pending: Promise<void>[] = [];
    for (const listener of [...this.#updates]) {
      try {
        const r = listener(u);
        if (r) pending.push(r);
      } catch (err) {
        this.#failed(u.runId, 'run update', err);
      }
    }
    let cut: StoppingError | undefined;
    for (const r of await Promise.allSettled(pending)) {
      if (r.status !== 'rejected') continue;
      if (r.reason instanceof StoppingError) cut = r.reason;
      else this.#failed(u.runId, 'run update', r.reason);
    }
    // The bridge stopped before the chats were told all of it: not delivered (the feed replays it).
    if (cut) throw cut;
  }

  /** Tells every notice listener. */
  notice(n: RunNotice): void {
    for (const listener of [...this.#notices]) {
      try {
        listener(n);
      } catch (err) {
        this.#failed(n.runId, 'notice', err);
      }
    }
  }

  /** Tells every progress listener. */
  progress(p: StepProgress): void {
    for (const listener of [...this.#progress]) {
      try {
        listener(p);
      } catch (err) {
        this.#failed(p.runId, 'progress', err);
      }
    }
  }

  /**
   * Resolves when the run is awaiting, blocked or terminal (from an update, or from `current`
   * read after subscribing, so an update in between is not missed); rejects on `failWaiters`.
   */
  waitUntilIdle(runId: string, current: () => Promise<RunState>): Promise<RunState> {
    return new Promise<RunState>((resolve, reject) => {
      let done = false;
      const finish = (state: RunState | null, err?: unknown): void => {
        if (done) return;
        done = true;
        off();
        this.#waiters.delete(fail);
        if (state) resolve(state);
        else reject(err);
      };
      const fail = (err: Error): void => finish(null, err);
      const off = this.onUpdate((u) => {
        if (u.runId === runId && isIdle(u.state)) finish(u.state);
      });
      this.#waiters.add(fail);
      current().then(
        (state) => {
          if (isIdle(state)) finish(state);
        },
        (err: unknown) => finish(null, err),
      );
    });
  }

  /** Rejects every pending `waitUntilIdle` (the orchestrator closes). */
  failWaiters(err: Error): void {
    for (const fail of [...this.#waiters]) fail(err);
  }

  #failed(runId: string, kind: string, err: unknown): void {
    this.#log.warn({ runId, err: errorMessage(err) }, `${kind} listener failed`);
  }
}
