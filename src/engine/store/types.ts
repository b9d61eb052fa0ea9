/** Types of the RunStore: its options and results, and the paths and options of an open run. */
import type { Effect, Rejection, RunEvent } from '../events.ts';
import type { LayoutProjection } from '../layouts/port.ts';
import type { RunState } from '../model.ts';
import type { RunAnalysis, RunCorruption } from './run-analysis.ts';

export type { RunCorruption } from './run-analysis.ts';

/**
 * Outcome of {@link RunStore.commit}. Accepted: the state after the command, its events and the
 * effects the caller must carry out (`duplicate: true` when the key was seen before; then these
 * are the FIRST outcome's values, from the ledger). `warnings`: the command is committed but a
 * projection (run.json, template.json, registry.db…) failed; it is retried on the next commit.
 * Rejected: nothing was written; `state` is the current state (null when the run does not exist).
 */
export type CommitResult =
  | {
      ok: true;
      state: RunState;
      events: RunEvent[];
      effects: Effect[];
      duplicate: boolean;
      warnings?: string[];
    }
  | { ok: false; rejection: Rejection; state: RunState | null };

/** A run as loaded: its state, what loading found and repaired, and corruption if any. */
export interface LoadedRun {
  /** The state; a corrupt run is shown `blocked` with kind 'corrupt' and the reason. */
  state: RunState;
  /** What was found and repaired on opening (torn ledger tail, stale or corrupt run.json). */
  warnings: string[];
  /** Set when the run cannot be written until {@link RunStore.repair}. */
  corrupt: RunCorruption | null;
}

/** Options of the RunStore. */
export interface RunStoreOptions {
  /** The workspace folder; runs live in `<workspace>/.phasebridge/runs/<id>/`. */
  workspace: string;
  /** Layouts written besides the native one (each when `appliesTo`/its name matches the run). */
  layouts?: readonly LayoutProjection[];
  /** Time source (backup file names of repairs); default `() => new Date()`. */
  clock?: () => Date;
}

/** One run as found by {@link RunStore.recover}. */
export interface RecoveredRun {
  runId: string;
  /** The loaded run, or the error that kept it from loading. */
  result: { ok: true; run: LoadedRun } | { ok: false; error: Error };
}

/** A ledger line a repair cuts away, with what it held when it could be read. */
export interface DroppedLine {
  /** 1-based line number in the ledger. */
  line: number;
  command?: string;
  key?: string;
  seq?: number;
}

/** What {@link RunStore.repair} found and did. */
export interface RepairReport {
  runId: string;
  /** What is wrong, one line each; empty when there is nothing to repair. */
  problems: string[];
  /** Why the run cannot be repaired (then nothing was changed), or null. */
  refused: string | null;
  /** True when files were changed (never for a dry run, a healthy run or a refusal). */
  repaired: boolean;
  /** Good ledger lines kept, of `lines` in the file. */
  kept: number;
  lines: number;
  /** Lines cut away: the first bad one and every line after it. */
  dropped: DroppedLine[];
  /** Backups written (a dry run: to be written), absolute paths. */
  backups: string[];
  /** The run as the ledger's kept lines give it (after the repair); null when there are none. */
  state: RunState | null;
  /** What is still wrong after the repair (e.g. a projection that keeps failing). */
  warnings: string[];
}

/** Paths of one run. */
export interface RunPaths {
  runId: string;
  workspace: string;
  runDir: string;
  ledger: string;
}

/** Options of {@link OpenRun.open}. */
export interface OpenRunOptions {
  /**
   * Sees the analysis under the run's lock before anything is written, and may replace it (an
   * explicit repair: back up, then load the good prefix with every projection rebuilt).
   */
  beforeLoad?: (a: RunAnalysis) => RunAnalysis;
  /** Folders whose new entries must be durable with the run's first ledger line (fsynced with it). */
  unsyncedDirs?: readonly string[];
}

/** Options of one {@link OpenRun.commit}. */
export interface CommitOptions {
  /**
   * When only the native run.json is to be written, leave it to {@link OpenRun.projectPending}:
   * the caller enqueues the command's jobs first (the next agent needs the ledger line, not
   * run.json), then writes run.json (durable before the commit's caller is answered).
   */
  deferProjection?: boolean;
}
