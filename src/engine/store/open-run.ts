/**
 * One run held open for writing by a RunStore: its lock file, its ledger writer, the replayed
 * state and the key→outcome index. All methods must be called under the store's per-run mutex.
 *
 * Commit order: decide → append the line + fsync → project layouts (extra ones, then run.json).
 * run.json's temp file is written and fsynced while the line is fsynced, and renamed into place
 * once the line is durable and the other layouts are written (never ahead of either): run.json
 * adds no fsync wait of its own to a commit.
 * Once the line is appended the command is committed: a projection failing after it is reported
 * as a warning of the commit and retried on the next commit or load, never thrown.
 */
import fs from 'node:fs';
import path from 'node:path';
import { ConflictError, CorruptStateError, PhasebridgeError } from '../../errors.ts';
import { markStage } from '../../trace.ts';
import type { Command } from '../commands.ts';
import { decide } from '../decide.ts';
import type { RunEvent } from '../events.ts';
import { evolve } from '../evolve.ts';
import { NATIVE_FILES, nativeLayout, stageRunJson } from '../layouts/native.ts';
import type { LayoutProjection, ProjectionContext } from '../layouts/port.ts';
import { fsyncDirAsync, type StagedWrite } from '../ledger/atomic-write.ts';
import { LedgerWriter } from '../ledger/ledger-file.ts';
import { formatLedgerLine } from '../ledger/ledger-format.ts';
import { RunLock } from '../ledger/run-lock.ts';
import { sweepOwnTemps } from '../ledger/temp-sweep.ts';
import type { RunState } from '../model.ts';
import {
  analyzeRun,
  type RunAnalysis,
  type RunCorruption,
  type RunLedgerEntry,
} from './run-analysis.ts';
import type { CommitResult, LoadedRun } from './types.ts';

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

/** States kept every this many ledger lines, so an old duplicate key replays only a few lines. */
const SNAPSHOT_EVERY = 256;

/** An open, locked run. */
export class OpenRun {
  readonly paths: RunPaths;
  readonly #layouts: readonly LayoutProjection[];
  readonly #lock: RunLock;
  #writer: LedgerWriter | null = null;
  #entries: RunLedgerEntry[] = [];
  readonly #keys = new Map<string, number>();
  readonly #snapshots = new Map<number, RunState>();
  #state: RunState | null = null;
  #ledgerBytes = 0;
  #corrupt: RunCorruption | null = null;
  #warnings: string[] = [];
  /** State at the last complete projection, and the events since (non-empty = stale). */
  #projected: RunState | null = null;
  #pending: RunEvent[] = [];
  #rebuild = false;
  /** The run folder, open for the fsync after each run.json rename (null: opened per write). */
  #dirFd: number | null = null;

  private constructor(paths: RunPaths, layouts: readonly LayoutProjection[], lock: RunLock) {
    this.paths = paths;
    this.#layouts = layouts;
    this.#lock = lock;
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
    const run = new OpenRun(paths, layouts, lock);
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
    this.#ledgerBytes = a.goodBytes;
    this.#corrupt = a.corrupt;
    this.#warnings = a.warnings;
    this.#writer?.close();
    this.#writer = null;
    if (a.corrupt) return; // never written to until an explicit repair
    this.#writer = LedgerWriter.open(this.paths.ledger, a.goodBytes);
    // A new ledger's folder entry must be durable before its first line counts.
    if (a.goodBytes === 0) await fsyncDirAsync(this.paths.runDir);
    this.#dirFd ??= openDir(this.paths.runDir);
    this.#projected = a.state;
    this.#pending = [];
    this.#rebuild = false;
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
    // Nothing stale: run.json is staged while the line is fsynced (see the top).
    const staging = !later && this.#canStage() ? stageRunJson(next, this.paths.runDir) : null;
    staging?.catch(() => undefined); // awaited below; a failure there is a warning
    markStage(this.paths.runId, 'decided');
    try {
      await this.#append(formatLedgerLine(entry));
    } catch (err) {
      await staging?.then(
        (s) => s.discard(),
        () => undefined,
      );
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
    if (!later) failed = await this.#tryProject(staging ?? undefined);
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
    return !this.#layouts.some((l) => (l.appliesTo ? l.appliesTo(state) : l.name === state.layout));
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
    let from = Math.floor(count / SNAPSHOT_EVERY) * SNAPSHOT_EVERY;
    let state = from === 0 ? null : (this.#snapshots.get(from) ?? null);
    if (state === null) from = 0;
    for (const entry of this.#entries.slice(from, count)) {
      for (const event of entry.events) state = evolve(state, event);
    }
    return state;
  }

  /**
   * Appends a line (resolving once it is fsynced); on failure cuts the file back so no half line
   * stays before the next one.
   */
  async #append(line: string): Promise<void> {
    const writer = this.#writer!;
    try {
      await writer.append(line);
    } catch (err) {
      try {
        writer.truncate(this.#ledgerBytes);
      } catch {
        // Cannot repair now: a reopen will find and drop the torn tail.
        this.#corrupt = { reason: 'a ledger append failed; reopen the run', repairable: false };
      }
      throw err;
    }
    this.#ledgerBytes += Buffer.byteLength(line);
  }

  /** Projects; returns null, or the warning saying which projection failed and why. */
  async #tryProject(stagedRunJson?: Promise<StagedWrite>): Promise<string | null> {
    try {
      await this.#project(stagedRunJson);
      return null;
    } catch (err) {
      if (!(err instanceof ProjectionFailure)) throw err;
      return projectionWarning(err.layout, err.message, this.paths.runId);
    }
  }

  /**
   * Writes every applicable layout, native `run.json` last (it marks the projection complete):
   * `stagedRunJson`, when given, is the state's run.json already written beside its place.
   */
  async #project(stagedRunJson?: Promise<StagedWrite>): Promise<void> {
    const state = this.#state;
    if (state === null) return;
    const native: LayoutProjection = stagedRunJson
      ? {
          name: nativeLayout.name,
          project: async () => (await stagedRunJson).publish(this.#dirFd ?? undefined),
        }
      : nativeLayout;
    const entries = this.#entries;
    const ctx: ProjectionContext = {
      runDir: this.paths.runDir,
      // The store's own workspace, never one a ledger line names.
      workspace: this.paths.workspace,
      events: this.#pending,
      previous: this.#projected,
      rebuild: this.#rebuild,
      history: () => entries.flatMap((e) => e.events),
    };
    for (const layout of [...this.#layouts, native]) {
      try {
        const applies =
          layout === native ||
          (layout.appliesTo ? layout.appliesTo(state) : layout.name === state.layout);
        if (applies) await layout.project(state, ctx);
      } catch (cause) {
        // A layout failed: the staged run.json must not mark the projection complete.
        if (stagedRunJson && layout !== native)
          await stagedRunJson.then(
            (w) => w.discard(),
            () => undefined,
          );
        throw new ProjectionFailure(layout.name, cause);
      }
    }
    this.#projected = state;
    this.#pending = [];
    this.#rebuild = false;
  }

  /** Closes the ledger and releases the lock file. */
  close(): void {
    this.#writer?.close();
    this.#writer = null;
    if (this.#dirFd !== null) fs.closeSync(this.#dirFd);
    this.#dirFd = null;
    this.#lock.release();
  }
}

/** A layout's projection threw `cause` (the message is the cause's). */
class ProjectionFailure extends Error {
  readonly layout: string;
  constructor(layout: string, cause: unknown) {
    super(cause instanceof Error ? cause.message : String(cause), { cause });
    this.layout = layout;
  }
}

/** The warning of a commit whose projection by `layout` failed. */
function projectionWarning(layout: string, message: string, runId: string): string {
  return `the ${layout} projection failed (${message}); the ledger has the run, the projection is retried on the next commit (\`phasebridge repair ${runId}\` rebuilds damaged files)`;
}

/** The run folder opened for fsync (not following a symlink). */
function openDir(dir: string): number {
  const { O_RDONLY, O_DIRECTORY, O_NOFOLLOW } = fs.constants;
  return fs.openSync(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
}

function withWarning(result: CommitResult, warning: string | null): CommitResult {
  return warning === null || !result.ok ? result : { ...result, warnings: [warning] };
}
