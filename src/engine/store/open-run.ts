/**
 * One run held open for writing by a RunStore: its lock file, its ledger writer, the replayed
 * state and the key→outcome index. All methods must be called under the store's per-run mutex.
 *
 * Commit order: decide → stage the projection (run.json's and the layouts' next files written
 * beside their places) → append the line → fsync the line and the staged files together → publish
 * once the line is durable (extra layouts, then run.json; staged-projection.ts).
 * Once the line is appended the command is committed: a projection failing after it is reported
 * as a warning of the commit and retried on the next commit or load, never thrown.
 *
 * The other layouts' files are not fsynced by the commit (layout-marker.ts), except a layout's
 * that declares `durableEachCommit` (codemachine): a durable marker says since which seq they
 * may be behind, {@link OpenRun.flush} (on release) makes them durable and removes it, and a run
 * opened with a marker re-projects them from the ledger.
 */
import path from 'node:path';
import { ConflictError, CorruptStateError, PhasebridgeError } from '../../errors.ts';
import { markStage } from '../../trace.ts';
import type { Command } from '../commands.ts';
import { decide } from '../decide.ts';
import type { RunEvent } from '../events.ts';
import { evolve } from '../evolve.ts';
import { NATIVE_FILES, nativeLayout } from '../layouts/native.ts';
import type { LayoutProjection, ProjectionContext } from '../layouts/port.ts';
import { formatLedgerLine } from '../ledger/ledger-format.ts';
import { RunLock } from '../ledger/run-lock.ts';
import { sweepOwnTemps } from '../ledger/temp-sweep.ts';
import type { RunState } from '../model.ts';
import { LayoutDurability } from './layout-marker.ts';
import {
  analyzeRun,
  type RunAnalysis,
  type RunCorruption,
  type RunLedgerEntry,
  SNAPSHOT_EVERY,
  stateAfterLines,
} from './run-analysis.ts';
import { RunLedgerAppender } from './run-ledger-appender.ts';
import {
  applies,
  deferred,
  discardStaged,
  ProjectionFailure,
  type ProjectionTarget,
  projectionWarning,
  publishLayouts,
  type StageContext,
  type Staged,
  stageFirst,
  stageLayout,
  stageProjection,
  writesDeferred,
} from './staged-projection.ts';
import type { CommitOptions, CommitResult, LoadedRun, OpenRunOptions, RunPaths } from './types.ts';

/** An open, locked run. */
export class OpenRun {
  readonly paths: RunPaths;
  /** Where the projection goes: the run's folder, its workspace and the layouts. */
  readonly #target: ProjectionTarget;
  readonly #lock: RunLock;
  readonly #ledger: RunLedgerAppender;
  #entries: RunLedgerEntry[] = [];
  readonly #keys = new Map<string, number>();
  readonly #snapshots = new Map<number, RunState>();
  #state: RunState | null = null;
  #corrupt: RunCorruption | null = null;
  #warnings: string[] = [];
  /** State at the last complete projection, and the events since (non-empty = stale). */
  #projected: RunState | null = null;
  #pending: RunEvent[] = [];
  #rebuild = false;
  /** The layouts' marker and the files they wrote without fsync since. */
  readonly #durability: LayoutDurability;

  private constructor(
    paths: RunPaths,
    layouts: readonly LayoutProjection[],
    lock: RunLock,
    unsyncedDirs: readonly string[],
  ) {
    this.paths = paths;
    this.#target = { runDir: paths.runDir, workspace: paths.workspace, layouts };
    this.#lock = lock;
    this.#ledger = new RunLedgerAppender(paths.runDir, paths.ledger, unsyncedDirs);
    this.#durability = new LayoutDurability(paths.runDir, () => this.#ledger.dirFd);
  }

  /** Locks the run, reads it, truncates a torn tail and re-projects stale layouts. */
  static async open(
    paths: RunPaths,
    layouts: readonly LayoutProjection[],
    opts: OpenRunOptions = {},
  ): Promise<OpenRun> {
    const lock = RunLock.acquire(path.join(paths.runDir, NATIVE_FILES.lock), paths.runId);
    // Under the lock no one else writes here: temp files of interrupted writes are leftovers.
    sweepOwnTemps(paths.runDir);
    const run = new OpenRun(paths, layouts, lock, opts.unsyncedDirs ?? []);
    try {
      const snapshots = new Map<number, RunState>();
      let a = analyzeRun(paths.runId, paths.runDir, paths.ledger, (count, state) => {
        if (count % SNAPSHOT_EVERY === 0) snapshots.set(count, state);
      });
      if (opts.beforeLoad) a = opts.beforeLoad(a);
      for (const [count, state] of snapshots) {
        if (count <= a.entries.length) run.#snapshots.set(count, state);
      }
      await run.#load(a);
    } catch (err) {
      run.close();
      throw err;
    }
    return run;
  }

  async #load(a: RunAnalysis): Promise<void> {
    this.#entries = a.entries;
    this.#keys.clear();
    a.entries.forEach((e, i) => {
      this.#keys.set(e.key, i);
    });
    this.#state = a.state;
    this.#corrupt = a.corrupt;
    this.#warnings = a.warnings;
    this.#ledger.detach();
    if (a.corrupt) return; // never written to until an explicit repair
    this.#ledger.open(a.goodBytes);
    this.#projected = a.state;
    this.#pending = [];
    this.#rebuild = false;
    const stale = a.projection.kind === 'stale' ? (a.projection.previous?.seq ?? 0) : null;
    this.#durability.reset(stale ?? a.state?.seq ?? 0, a.layoutsSince);
    if (a.projection.kind === 'stale') {
      this.#projected = a.projection.previous;
      this.#pending = a.projection.events;
      this.#rebuild = a.projection.rebuild;
      // The ledger is fine: report, keep the projection stale, retry on the next commit.
      const failed = await this.#tryProject();
      if (failed !== null) this.#warnings.push(failed);
    }
  }

  /** The run as loaded: state, warnings found when opening, corruption if any. */
  loaded(): LoadedRun {
    if (this.#state === null) {
      const why = this.#corrupt ? `: ${this.#corrupt.reason}` : '';
      throw new CorruptStateError(`run ${this.paths.runId} has no events${why}`);
    }
    return { state: this.#state, warnings: [...this.#warnings], corrupt: this.#corrupt };
  }

  /** True when the run has no committed command yet (a fresh folder). */
  get isEmpty(): boolean {
    return this.#state === null;
  }

  /** Why the run cannot be written, or null. */
  get corrupt(): RunCorruption | null {
    return this.#corrupt;
  }

  /** Decides and commits one command; a known key returns the first outcome. */
  async commit(key: string, command: Command, opts: CommitOptions = {}): Promise<CommitResult> {
    if (this.#corrupt) {
      throw new CorruptStateError(
        `run ${this.paths.runId} is blocked: ${this.#corrupt.reason}; nothing was committed (repair it: phasebridge repair ${this.paths.runId})`,
      );
    }
    // A projection left stale by an earlier failure is retried first; still failing, the
    // command goes on: the ledger alone decides, and the next attempt follows the append.
    const stale = this.#pending.length > 0 || this.#rebuild ? await this.#tryProject() : null;
    const seen = this.#keys.get(key);
    if (seen !== undefined) return withWarning(this.#duplicate(seen, key, command), stale);
    const decision = this.#decide(command);
    if (!decision.ok) return { ok: false, rejection: decision.rejection, state: this.#state };
    let next = this.#state;
    for (const event of decision.events) next = evolve(next, event);
    if (next === null) throw new Error(`decide accepted ${command.type} but produced no run`);
    const entry: RunLedgerEntry = {
      v: 1,
      seq: next.seq,
      key,
      at: command.at,
      command: command.type,
      actor: command.actor,
      events: decision.events,
      effects: decision.effects,
    };
    const later = opts.deferProjection === true && this.#onlyNative(next);
    markStage(this.paths.runId, 'decided');
    const line = formatLedgerLine(entry);
    // Staged files first, then the line, then all their fsyncs: one journal commit takes them
    // all (see the top). A run's first commit stages run.json alone (stageFirst).
    let staged: Staged | null = null;
    const first = this.#state === null && this.#pending.length === 0 && !this.#rebuild;
    if (!later && (this.#canStage() || first)) {
      const prior = this.#entries;
      const events = decision.events;
      const ctx = {
        events,
        previous: this.#projected,
        rebuild: false,
        history: () => [...prior.flatMap((e) => e.events), ...events],
      };
      staged = first ? stageFirst(this.#target, next, ctx) : this.#stage(next, ctx, true);
    }
    const appended = this.#append(line);
    appended.catch(() => undefined); // awaited below
    // The marker is made durable beside the ledger line, before any layout file moves.
    const marks = first ? this.#target.layouts.some((l) => writesDeferred(l, next)) : false;
    if (marks || staged?.layouts.some(deferred)) this.#durability.ensure().catch(() => undefined);
    try {
      await appended;
    } catch (err) {
      if (staged) await discardStaged(staged);
      throw err;
    }
    markStage(this.paths.runId, 'durable');
    this.#entries.push(entry);
    this.#keys.set(key, this.#entries.length - 1);
    if (this.#entries.length % SNAPSHOT_EVERY === 0) {
      this.#snapshots.set(this.#entries.length, next);
    }
    this.#state = next;
    this.#pending.push(...decision.events);
    let failed: string | null = null;
    if (!later) failed = await this.#tryProject(staged ?? undefined);
    const { events, effects } = decision;
    const result: CommitResult = { ok: true, state: next, events, effects, duplicate: false };
    return withWarning(result, failed);
  }

  /**
   * Writes the projection a deferred commit left (nothing when up to date); returns null, or the
   * warning saying which projection failed (it is retried on the next commit).
   */
  async projectPending(): Promise<string | null> {
    if (this.#pending.length === 0 && !this.#rebuild) return null;
    return this.#tryProject();
  }

  /** True when the projection is up to date: the next run.json can be staged. */
  #canStage(): boolean {
    return this.#projected !== null && this.#pending.length === 0 && !this.#rebuild;
  }

  /** True when no layout but the native one applies to `state`. */
  #onlyNative(state: RunState): boolean {
    return !this.#target.layouts.some((l) => applies(l, state));
  }

  /** decide(), with a throw on a state no valid ledger yields reported as corruption. */
  #decide(command: Command): ReturnType<typeof decide> {
    try {
      return decide(this.#state, command);
    } catch (err) {
      if (err instanceof PhasebridgeError) throw err;
      throw new CorruptStateError(
        `run ${this.paths.runId} cannot take ${command.type}: its ledger gives a state the engine cannot use (${(err as Error).message})`,
        { cause: err },
      );
    }
  }

  #duplicate(index: number, key: string, command: Command): CommitResult {
    const entry = this.#entries[index]!;
    if (entry.command !== command.type) {
      throw new ConflictError(
        `idempotency key ${key} was already used for ${entry.command}, not ${command.type}`,
      );
    }
    const state = this.#stateAfter(index + 1);
    if (state === null) {
      throw new CorruptStateError(`run ${this.paths.runId}: key ${key} has no state`);
    }
    return { ok: true, state, events: entry.events, effects: entry.effects, duplicate: true };
  }

  /** The state after the first `count` ledger lines, replayed from the nearest snapshot. */
  #stateAfter(count: number): RunState | null {
    if (count === this.#entries.length) return this.#state;
    return stateAfterLines(this.#entries, this.#snapshots, count);
  }

  /** Appends a line (durable once resolved); a torn line left behind blocks the run. */
  async #append(line: string): Promise<void> {
    try {
      await this.#ledger.append(line);
    } catch (err) {
      if (this.#ledger.torn) {
        this.#corrupt = { reason: 'a ledger append failed; reopen the run', repairable: false };
      }
      throw err;
    }
  }

  /** Projects; returns null, or the warning saying which projection failed and why. */
  async #tryProject(staged?: Staged): Promise<string | null> {
    try {
      await this.#project(staged);
      return null;
    } catch (err) {
      if (!(err instanceof ProjectionFailure)) throw err;
      return projectionWarning(err.layout, err.message, this.paths.runId);
    }
  }

  /** Stages `state`'s projection (stageProjection; whole when first or rebuilt): see #project. */
  #stage(state: RunState, ctx: StageContext, early: boolean): Staged {
    const whole = this.#projected === null || ctx.rebuild;
    return stageProjection(this.#target, state, ctx, { early, whole });
  }

  /**
   * Makes the layouts' files written since the marker durable and removes it (before a release:
   * nothing is left to re-project). A failure keeps the marker, so a reopen re-projects.
   */
  async flush(): Promise<void> {
    await this.#durability.flush(this.#projected?.seq ?? 0);
  }

  /**
   * Publishes a staged projection (staging now what was not staged early): every layout's batch
   * at once (their renames, appends and folder fsyncs overlap), then run.json last, since it
   * marks the projection complete. A layout that fails keeps run.json out (it stays stale).
   */
  async #project(given?: Staged): Promise<void> {
    const state = this.#state;
    if (state === null) return;
    const entries = this.#entries;
    const staged =
      given ??
      this.#stage(
        state,
        {
          events: this.#pending,
          previous: this.#projected,
          rebuild: this.#rebuild,
          history: () => entries.flatMap((e) => e.events),
        },
        false,
      );
    for (const layout of this.#target.layouts) {
      if (!applies(layout, state) || staged.layouts.some((l) => l.layout === layout)) continue;
      staged.layouts.push(stageLayout(this.#target, layout, state, staged.ctx));
    }
    await publishLayouts(staged, this.#durability);
    try {
      if (staged.runJson) await (await staged.runJson).publish(this.#ledger.dirFd ?? undefined);
      else await nativeLayout.project(state, this.#nativeContext());
    } catch (cause) {
      throw new ProjectionFailure(nativeLayout.name, cause);
    }
    this.#projected = state;
    this.#pending = [];
    this.#rebuild = false;
  }

  /** What the native projection needs to know (a first or rebuilt one creates logs/). */
  #nativeContext(): ProjectionContext {
    return {
      runDir: this.paths.runDir,
      workspace: this.paths.workspace,
      events: this.#pending,
      previous: this.#projected,
      rebuild: this.#rebuild,
    };
  }

  /** Closes the ledger and releases the lock file. */
  close(): void {
    this.#ledger.close();
    this.#lock.release();
  }
}

function withWarning(result: CommitResult, warning: string | null): CommitResult {
  return warning === null || !result.ok ? result : { ...result, warnings: [warning] };
}
