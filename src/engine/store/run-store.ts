/**
 * RunStore: the only writer of a workspace's runs. Every command goes decide → ledger append +
 * fsync → projections (other layouts, then native run.json), under a per-run in-process mutex
 * and a per-run lock file held from the first access to a run until release()/close().
 *
 * Usage:
 *   const store = new RunStore({ workspace, layouts: [codemachineLayout] });
 *   const r = await store.commit(runId, updateId, command); // r.effects → enqueue jobs
 *   await store.close();
 */
import fs from 'node:fs';
import path from 'node:path';
import { CorruptStateError, InvalidInputError, NotFoundError } from '../../errors.ts';
import { withPath } from '../../fs-errors.ts';
import { markStage } from '../../trace.ts';
import type { Command } from '../commands.ts';
import { decide } from '../decide.ts';
import { NATIVE_FILES, nativeRunDir, runsDir } from '../layouts/native.ts';
import type { LayoutProjection } from '../layouts/port.ts';
import { ensureRealDir, lstatNoSymlink } from '../ledger/atomic-write.ts';
import { KeyedMutex } from '../ledger/keyed-mutex.ts';
import { hasNoLedgerLine, sweepNeverStarted } from './never-started.ts';
import { OpenRun } from './open-run.ts';
import { analyzeRun, replayEntries } from './run-analysis.ts';
import { assertRunId, isValidRunId } from './run-id.ts';
import { carryOut, planRepair, type RepairPlan } from './run-repair.ts';
import type {
  CommitOptions,
  CommitResult,
  LoadedRun,
  OpenRunOptions,
  RecoveredRun,
  RepairReport,
  RunPaths,
  RunStoreOptions,
} from './types.ts';

const MAX_KEY_LENGTH = 512;

/** Reads and writes the runs of one workspace. */
export class RunStore {
  /** The workspace folder (absolute). */
  readonly workspace: string;
  readonly #layouts: readonly LayoutProjection[];
  readonly #clock: () => Date;
  readonly #mutex = new KeyedMutex();
  readonly #open = new Map<string, OpenRun>();
  #closed = false;

  constructor(opts: RunStoreOptions) {
    this.workspace = path.resolve(opts.workspace);
    this.#layouts = (opts.layouts ?? []).filter((l) => l.name !== 'native');
    this.#clock = opts.clock ?? (() => new Date());
  }

  /** The folder of a run (the id is validated). */
  runDir(runId: string): string {
    assertRunId(runId);
    return nativeRunDir(this.workspace, runId);
  }

  /**
   * Decides and commits `command` on run `runId` under idempotency key `key`. A `start` command
   * creates the run. A key already in the run's ledger returns that first outcome (duplicate).
   * Throws CorruptStateError for a corrupt run, ConflictError when another process holds it.
   * `deferProjection`: see {@link CommitOptions}; the caller then calls {@link project}.
   */
  async commit(
    runId: string,
    key: string,
    command: Command,
    opts: CommitOptions = {},
  ): Promise<CommitResult> {
    const paths = this.#paths(runId);
    if (key === '' || key.length > MAX_KEY_LENGTH) {
      throw new InvalidInputError(`idempotency key must be 1..${MAX_KEY_LENGTH} characters`);
    }
    if (command.type === 'start') {
      if (command.runId !== runId) {
        throw new InvalidInputError(`start command is for run ${command.runId}, not ${runId}`);
      }
      if (path.resolve(command.workspace) !== this.workspace) {
        throw new InvalidInputError(`run ${runId} belongs to workspace ${this.workspace}`);
      }
    }
    return this.#mutex.run(runId, () =>
      // A full disk fails a write or fsync with no path: name the run's folder instead.
      this.#commit(runId, key, command, paths, opts).catch((err: unknown) => {
        throw withPath(err, paths.runDir);
      }),
    );
  }

  /**
   * Writes the projection a deferred commit of `runId` left (durable when this resolves);
   * returns null, or the warning of a projection that failed (retried on the next commit).
   */
  async project(runId: string): Promise<string | null> {
    const paths = this.#paths(runId);
    return this.#mutex.run(runId, () =>
      (this.#open.get(runId)?.projectPending() ?? Promise.resolve(null)).catch((err: unknown) => {
        throw withPath(err, paths.runDir);
      }),
    );
  }

  async #commit(
    runId: string,
    key: string,
    command: Command,
    paths: RunPaths,
    opts: CommitOptions,
  ): Promise<CommitResult> {
    let run = this.#open.get(runId);
    if (run === undefined) {
      if (!this.#exists(paths)) {
        const notFound = { code: 'NOT_FOUND' as const, message: `run ${runId} not found` };
        if (command.type !== 'start') return { ok: false, rejection: notFound, state: null };
        const first = decide(null, command);
        if (!first.ok) return { ok: false, rejection: first.rejection, state: null };
        ensureRealDir(paths.runDir, { root: this.workspace, mkdirs: true });
        // The new folder's entry is fsynced beside the first ledger line (OpenRun.#append).
        run = await this.#openRun(paths, { unsyncedDirs: [path.dirname(paths.runDir)] });
      } else run = await this.#openRun(paths);
    }
    markStage(runId, 'opened');
    return run.commit(key, command, opts);
  }

  /**
   * Opens the run for writing (taking its lock until release/close), truncates a torn ledger
   * tail and re-projects stale layouts. Throws NotFoundError when there is no such run.
   */
  async load(runId: string): Promise<LoadedRun> {
    const paths = this.#paths(runId);
    return this.#mutex.run(runId, async () => {
      const run = this.#open.get(runId) ?? (await this.#openExisting(paths));
      if (run.isEmpty && run.corrupt === null) throw new NotFoundError(`run ${runId} not found`);
      return run.loaded();
    });
  }

  /**
   * Reads a run without locking or repairing anything (for status views while a server runs):
   * the state is always the ledger's replay, whatever run.json says.
   */
  async peek(runId: string): Promise<LoadedRun> {
    const paths = this.#paths(runId);
    const open = this.#open.get(runId);
    if (open && !open.isEmpty) return open.loaded();
    if (!this.#exists(paths)) throw new NotFoundError(`run ${runId} not found`);
    const a = analyzeRun(runId, paths.runDir, paths.ledger);
    if (a.state === null) {
      if (a.corrupt) {
        throw new CorruptStateError(
          `run ${runId} cannot be read: ${a.corrupt.reason} (see phasebridge repair ${runId} --dry-run)`,
        );
      }
      throw new NotFoundError(`run ${runId} not found`);
    }
    return { state: a.state, warnings: a.warnings, corrupt: a.corrupt };
  }

  /**
   * Ids of the runs of this workspace (folders with a ledger), oldest first; `want` filters
   * names before any file is looked at (a folder listing is cheap, thousands of stats are not).
   */
  async list(want: (runId: string) => boolean = () => true): Promise<string[]> {
    this.#assertOpen();
    const dir = runsDir(this.workspace);
    let names: fs.Dirent[];
    try {
      names = fs.readdirSync(dir, { withFileTypes: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw err;
    }
    return (
      names
        .filter((d) => d.isDirectory() && isValidRunId(d.name) && want(d.name))
        .filter((d) => fs.existsSync(path.join(dir, d.name, NATIVE_FILES.ledger)))
        // A folder whose ledger has no line yet is not a run (a start killed before it).
        .filter((d) => this.#open.has(d.name) || !hasNoLedgerLine(path.join(dir, d.name)))
        .map((d) => d.name)
        .sort()
    );
  }

  /**
   * Removes run folders that never became runs (no ledger line, nothing but our own leftovers,
   * older than `graceMs`; never-started.ts) and returns their ids. Runs open here are skipped.
   */
  sweepNeverStarted(opts: { now?: number; graceMs?: number } = {}): string[] {
    this.#assertOpen();
    return sweepNeverStarted(runsDir(this.workspace), {
      ...opts,
      skip: (runId) => this.#open.has(runId),
    });
  }

  /** At start-up: loads every run (repairing what can be repaired); reports each outcome. */
  async recover(): Promise<RecoveredRun[]> {
    const out: RecoveredRun[] = [];
    for (const runId of await this.list()) {
      try {
        out.push({ runId, result: { ok: true, run: await this.load(runId) } });
      } catch (err) {
        out.push({ runId, result: { ok: false, error: err as Error } });
      }
    }
    return out;
  }

  /**
   * Explicit repair (a human's decision): reports what is wrong; unless `dryRun`, backs up the
   * ledger and run.json (`<file>.corrupt-<time>`), moves aside layout files that cannot be read,
   * keeps the ledger's longest valid prefix and rebuilds every projection from it. A healthy run
   * is left alone; one with no valid line to keep is refused (`refused`, nothing changed).
   */
  async repair(runId: string, opts: { dryRun?: boolean } = {}): Promise<RepairReport> {
    const paths = this.#paths(runId);
    return this.#mutex.run(runId, async () => {
      if (!this.#exists(paths)) throw new NotFoundError(`run ${runId} not found`);
      const stamp = this.#clock().toISOString().replace(/[:.]/g, '');
      if (opts.dryRun) {
        const a = analyzeRun(runId, paths.runDir, paths.ledger);
        if (a.state === null && a.corrupt === null) {
          throw new NotFoundError(`run ${runId} not found`);
        }
        const plan = planRepair(a, paths, this.#layouts, stamp);
        const state = replayEntries(a.entries).state;
        const backups = plan.copies.map((c) => c.to);
        return { runId, ...planFields(plan), repaired: false, backups, state, warnings: [] };
      }
      // A repair starts from the files as they are now, not from an open run's view of them.
      await settle(this.#open.get(runId));
      this.#open.delete(runId);
      let plan: RepairPlan | undefined;
      const run = await this.#openRun(paths, {
        beforeLoad: (a) => {
          plan = planRepair(a, paths, this.#layouts, stamp);
          if (plan.refused !== null || plan.problems.length === 0) return a;
          return carryOut(plan, a, paths, this.#layouts, stamp);
        },
      });
      const p = plan!;
      const repaired = p.refused === null && p.problems.length > 0;
      const loaded = run.isEmpty ? null : run.loaded();
      return {
        runId,
        ...planFields(p),
        repaired,
        backups: repaired ? [...p.copies.map((c) => c.to), ...p.moved] : [],
        state: loaded?.state ?? null,
        warnings: repaired ? (loaded?.warnings ?? []) : [],
      };
    });
  }

  /**
   * Closes one run: the layouts' files it wrote are made durable (layout-marker.ts), then its
   * lock file is removed so another process may take it.
   */
  async release(runId: string): Promise<void> {
    assertRunId(runId);
    return this.#mutex.run(runId, async () => {
      await settle(this.#open.get(runId));
      this.#open.delete(runId);
    });
  }

  /** Waits for pending commits, then releases every run. The store cannot be used after. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#mutex.drain();
    await Promise.all([...this.#open.values()].map(settle));
    this.#open.clear();
  }

  #assertOpen(): void {
    if (this.#closed) throw new Error('RunStore is closed');
  }

  #paths(runId: string): RunPaths {
    this.#assertOpen();
    const runDir = this.runDir(runId);
    return {
      runId,
      workspace: this.workspace,
      runDir,
      ledger: path.join(runDir, NATIVE_FILES.ledger),
    };
  }

  /** True when the run folder exists; throws CorruptStateError on a symlink along the way. */
  #exists(paths: RunPaths): boolean {
    let current = this.workspace;
    for (const part of path.relative(this.workspace, paths.runDir).split(path.sep)) {
      current = path.join(current, part);
      const st = lstatNoSymlink(current);
      if (st === null) return false;
      if (!st.isDirectory()) throw new CorruptStateError(`${current} is not a folder`);
    }
    return true;
  }

  async #openExisting(paths: RunPaths): Promise<OpenRun> {
    if (!this.#exists(paths)) throw new NotFoundError(`run ${paths.runId} not found`);
    return this.#openRun(paths);
  }

  async #openRun(paths: RunPaths, opts: OpenRunOptions = {}): Promise<OpenRun> {
    this.#assertOpen();
    const run = await OpenRun.open(paths, this.#layouts, opts);
    this.#open.set(paths.runId, run);
    return run;
  }
}

/**
 * Flushes the run's layouts' files, then closes it. A flush that fails leaves the marker: the
 * next open re-projects the layouts from the ledger, so the close goes on.
 */
async function settle(run: OpenRun | undefined): Promise<void> {
  if (run === undefined) return;
  try {
    await run.flush();
  } catch {
    // The marker stays in the run folder (see above).
  } finally {
    run.close();
  }
}

function planFields(
  p: RepairPlan,
): Pick<RepairReport, 'problems' | 'refused' | 'kept' | 'lines' | 'dropped'> {
  return {
    problems: p.problems,
    refused: p.refused,
    kept: p.kept,
    lines: p.lines,
    dropped: p.dropped,
  };
}
