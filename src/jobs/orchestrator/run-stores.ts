/**
 * One RunStore per workspace (a store writes the runs of one workspace), all sharing the
 * orchestrator's layout projections (one per layout of the table, made once). Also turns the run
 * lock's conflict into the message users see: "run X is being driven by pid N".
 */
import path from 'node:path';
import type { ClosableProjection, ProjectionFactory } from '../../engine/layouts/module.ts';
import { RunStore } from '../../engine/store/run-store.ts';
import { ConflictError } from '../../errors.ts';
import type { AgentInfo } from './agent-resolver.ts';

/** The stores of every workspace the orchestrator touched. */
export class RunStores {
  readonly #stores = new Map<string, RunStore>();
  readonly #layouts: ClosableProjection[];
  readonly #clock: () => Date;
  /** Set once this process gave its runs up to another bridge: why it may open none again. */
  #relinquished: string | undefined;

  constructor(opts: {
    agentInfo: (name: string) => AgentInfo | undefined;
    clock: () => Date;
    /** The layouts' projection factories (`loadProjectionFactories()` of the layouts table). */
    projections: readonly ProjectionFactory[];
    /** A hand edit of a layout's file was found during a commit: the caller applies it soon. */
    onHandEdit?: (runId: string) => void;
  }) {
    const deps = {
      agentInfo: opts.agentInfo,
      ...(opts.onHandEdit && { onHandEdit: opts.onHandEdit }),
    };
    this.#layouts = opts.projections.map((make) => make(deps));
    this.#clock = opts.clock;
  }

  /** The store of `workspace` (opened on first use). */
  for(workspace: string): RunStore {
    if (this.#relinquished !== undefined) throw new ConflictError(this.#relinquished);
    const ws = path.resolve(workspace);
    let store = this.#stores.get(ws);
    if (store === undefined) {
      store = new RunStore({
        workspace: ws,
        layouts: this.#layouts,
        clock: this.#clock,
      });
      this.#stores.set(ws, store);
    }
    return store;
  }

  /**
   * Another bridge leads now: pending commits end, every run lock is released at once, and no
   * run is opened again by this process (`for` throws ConflictError with `reason`), so the new
   * leader's commits need not wait for this process's stop.
   */
  async relinquish(reason: string): Promise<void> {
    this.#relinquished = reason;
    await this.#closeStores();
  }

  /** Closes every store (releasing every run lock) and the layouts' handles (registry.db). */
  async close(): Promise<void> {
    await this.#closeStores();
    for (const layout of this.#layouts) layout.close?.();
  }

  async #closeStores(): Promise<void> {
    await Promise.all([...this.#stores.values()].map((s) => s.close()));
    this.#stores.clear();
  }
}

const LOCKED_BY = /is locked by pid (\d+)( \(this process\))?/;
const HELD = /is (locked|being driven) by pid \d+/;

/** True when `err` says another live holder has the run's lock (reworded or not). */
export function isRunLockConflict(err: unknown): boolean {
  return err instanceof ConflictError && HELD.test(err.message);
}

/** The run lock's ConflictError reworded for users; other errors are returned unchanged. */
export function describeLockConflict(err: unknown, runId: string): unknown {
  if (!(err instanceof ConflictError)) return err;
  const m = LOCKED_BY.exec(err.message);
  if (m === null) return err;
  const who = m[2] === undefined ? '' : ' (this process)';
  return new ConflictError(`run ${runId} is being driven by pid ${m[1]}${who}`, { cause: err });
}
