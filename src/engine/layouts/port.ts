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
 * - Durable writes go through `ctx.io` (see {@link projectThrough}): on a commit the store runs
 *   the projection before the ledger line is written (its fsyncs start with the line's), with
 *   `state` the state the line
 *   yields, and publishes the batch once the line is durable (or discards it when the append
 *   fails). Reads happen while staging; anything that must not happen before the ledger line is
 *   durable (an append, a commit, a cache update) goes in the batch's publish steps.
 */

import type { RunEvent } from '../events.ts';
import { DurableBatch } from '../ledger/durable-batch.ts';
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
  /**
   * The batch to stage this projection's durable writes in; the store publishes it after the
   * ledger line. Absent (a direct call): the projection publishes its own batch before returning.
   */
  io?: DurableBatch;
}

/**
 * Runs a projection's body against `ctx.io`, or, called without one, against a batch of its own
 * that is published (durable) before this resolves and discarded when the body throws.
 */
export async function projectThrough(
  ctx: ProjectionContext,
  body: (io: DurableBatch) => void | Promise<void>,
): Promise<void> {
  if (ctx.io) return body(ctx.io);
  const io = new DurableBatch();
  try {
    await body(io);
  } catch (err) {
    await io.discard();
    throw err;
  }
  await io.publish();
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
  /**
   * true: `project` writes only through `ctx.io` (reads aside), so a commit may run it while its
   * ledger line is being fsynced. Otherwise it runs after the line is durable (default).
   */
  readonly stages?: true;
  /**
   * true: every commit makes this layout's files durable before run.json (files read back as
   * commands, e.g. codemachine's hand-edited template.json: a write lost in a power cut would
   * read as an edit). Otherwise a commit writes them without fsync, covered by the run's marker
   * until the run is released (store/layout-marker.ts).
   */
  readonly durableEachCommit?: true;
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
