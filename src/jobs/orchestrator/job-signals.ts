/**
 * Applies job signals (agent started, job finished, checkpoint expired) to runs. When another
 * live process drives the run (it holds the run's lock), the signal is retried a few times with
 * backoff: that process listens to the same queue and usually applies it itself, after which
 * ours would be stale or a duplicate, so the retries stop as soon as decide() would refuse it.
 */
import { decide } from '../../engine/decide.ts';
import type { RunState } from '../../engine/model.ts';
import { NotFoundError } from '../../errors.ts';
import type { Log } from '../../log.ts';
import { errorMessage } from '../queue/outcome.ts';
import type { KeyedCommand } from './job-results.ts';
import type { RunDriver } from './run-driver.ts';
import { isRunLockConflict } from './run-stores.ts';

/** Waits between attempts while another process holds the run (about 6 s in all). */
const RETRY_MS = [100, 200, 400, 800, 1600, 3200];

/** True when at least one of the commands would still be accepted by the run. */
export function wouldApply(state: RunState, commands: readonly KeyedCommand[]): boolean {
  const at = new Date().toISOString();
  return commands.some((c) => decide(state, { ...c.command, at }).ok);
}

/** Applies job signals with retries on lock conflicts. */
export class JobSignals {
  readonly #driver: RunDriver;
  readonly #log: Log;
  readonly #timers = new Set<NodeJS.Timeout>();
  #closed = false;

  constructor(deps: { driver: RunDriver; log: Log }) {
    this.#driver = deps.driver;
    this.#log = deps.log;
  }

  /**
   * Commits what `plan` derives from the run's state. Resolves after the first attempt (a retry
   * continues in the background); never rejects.
   */
  apply(runId: string, label: string, plan: (state: RunState) => KeyedCommand[]): Promise<void> {
    return this.#attempt(runId, label, plan, 0);
  }

  /** Drops pending retries. */
  close(): void {
    this.#closed = true;
    for (const t of this.#timers) clearTimeout(t);
    this.#timers.clear();
  }

  async #attempt(
    runId: string,
    label: string,
    plan: (state: RunState) => KeyedCommand[],
    n: number,
  ): Promise<void> {
    if (this.#closed) return;
    try {
      await this.#driver.commitPlanned(runId, plan);
    } catch (err) {
      if (err instanceof NotFoundError) {
        this.#log.debug({ runId, label }, 'job signal for a run this bridge does not know');
        return;
      }
      const wait = RETRY_MS[n];
      if (!isRunLockConflict(err) || wait === undefined) {
        this.#log.warn({ runId, label, err: errorMessage(err) }, 'job signal not applied');
        return;
      }
      const state = await this.#driver.peek(runId).catch(() => null);
      if (state !== null && !wouldApply(state, plan(state))) return; // applied elsewhere
      this.#log.debug({ runId, label, err: errorMessage(err) }, 'run busy; retrying job signal');
      const timer = setTimeout(() => {
        this.#timers.delete(timer);
        void this.#attempt(runId, label, plan, n + 1);
      }, wait);
      this.#timers.add(timer);
    }
  }
}
