/**
 * The Layout port: every on-disk format (native, codemachine, …) is a projection of a run's
 * ledger, rewritten by the RunStore after the ledger line is durable.
 *
 * Contract for implementations:
 * - `project` must be idempotent and derive its files from `state` (plus `events`/`previous` for
 *   things only events tell, e.g. "a step just started"): after a crash the store calls it again
 *   with every event since the last complete projection, or with `rebuild: true` and
 *   `previous: null` when it has to rebuild from the whole ledger.
 * - Write files atomically (`writeFileAtomic` from `../ledger/atomic-write.ts`), never follow
 *   symlinks, and throw on failure: the command stays committed, the store reports a warning,
 *   keeps the projection marked stale and retries it on the next commit or load.
 * - The store projects extra layouts first and the native `run.json` last, so `run.json`'s `seq`
 *   marks the last commit every layout has seen.
 */
import type { RunEvent } from '../events.ts';
import type { RunState } from '../model.ts';

/** What a projection gets besides the new state. */
export interface ProjectionContext {
  /** `<workspace>/.phasebridge/runs/<id>` (exists, checked not to be a symlink). */
  runDir: string;
  /** The run's workspace folder. */
  workspace: string;
  /** Events not yet projected, oldest first (usually the events of the commit just made). */
  events: readonly RunEvent[];
  /** The state before `events`; null when unknown (rebuild) or before the run's first event. */
  previous: RunState | null;
  /** True when projections are rebuilt from the whole ledger (missing/corrupt/behind run.json). */
  rebuild: boolean;
  /**
   * Every event of the ledger up to `state.seq` (event i has seq i + 1), for a layout that finds
   * its own files behind `previous` (e.g. a registry deleted or restored) and must catch up.
   */
  history?: () => readonly RunEvent[];
}

/** A file of a layout that cannot be read at all, found by {@link LayoutProjection.salvage}. */
export interface SalvagedFile {
  /** What is wrong with it, for the user. */
  problem: string;
  /** Where it was moved (absent when only looking). */
  backup?: string;
}

/** One on-disk format written from a run's state. */
export interface LayoutProjection {
  /** The layout's name (`native`, `codemachine`, …); matched against `RunState.layout`. */
  readonly name: string;
  /** Whether this layout is written for the run; default: `state.layout === name`. */
  appliesTo?(state: RunState): boolean;
  /** Writes the layout's files for `state`. */
  project(state: RunState, ctx: ProjectionContext): Promise<void>;
  /**
   * For an explicit repair: finds this layout's files in `workspace` that cannot be read at all
   * and, when `stamp` is given, moves each to `<file>.corrupt-<stamp>` so a rebuild recreates it.
   */
  salvage?(workspace: string, stamp: string | null): SalvagedFile[];
}
