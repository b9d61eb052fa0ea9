/**
 * One run held open for writing by a RunStore: its lock file, its ledger writer, the replayed
 * state and the key→outcome index. All methods must be called under the store's per-run mutex.
 *
 * Commit order: decide → append the line + fsync → project layouts (extra ones, then run.json).
 */
import path from 'node:path';
import { ConflictError, CorruptStateError } from '../../errors.ts';
import type { Command } from '../commands.ts';
import { decide } from '../decide.ts';
import type { RunEvent } from '../events.ts';
import { evolve } from '../evolve.ts';
import { NATIVE_FILES, nativeLayout } from '../layouts/native.ts';
import type { LayoutProjection } from '../layouts/port.ts';
import { fsyncDir } from '../ledger/atomic-write.ts';
import { LedgerWriter } from '../ledger/ledger-file.ts';
import { formatLedgerLine } from '../ledger/ledger-format.ts';
import { RunLock } from '../ledger/run-lock.ts';
import type { RunState } from '../model.ts';
import {
  analyzeRun,
  type RunAnalysis,
  type RunCorruption,
  type RunLedgerEntry,
  replayEntries,
} from './run-analysis.ts';
import type { CommitResult, LoadedRun } from './types.ts';

/** Paths of one run. */
export interface RunPaths {
  runId: string;
  workspace: string;
  runDir: string;
  ledger: string;
}

/** An open, locked run. */
export class OpenRun {
  readonly paths: RunPaths;
  readonly #layouts: readonly LayoutProjection[];
  readonly #lock: RunLock;
  #writer: LedgerWriter | null = null;
  #entries: RunLedgerEntry[] = [];
  readonly #keys = new Map<string, number>();
  #state: RunState | null = null;
  #ledgerBytes = 0;
  #corrupt: RunCorruption | null = null;
  #warnings: string[] = [];
  /** State at the last complete projection, and the events since (non-empty = stale). */
  #projected: RunState | null = null;
  #pending: RunEvent[] = [];
  #rebuild = false;

  private constructor(paths: RunPaths, layouts: readonly LayoutProjection[], lock: RunLock) {
    this.paths = paths;
    this.#layouts = layouts;
    this.#lock = lock;
  }

  /** Locks the run, reads it, truncates a torn tail and re-projects stale layouts. */
  static async open(paths: RunPaths, layouts: readonly LayoutProjection[]): Promise<OpenRun> {
    const lock = RunLock.acquire(path.join(paths.runDir, NATIVE_FILES.lock), paths.runId);
    const run = new OpenRun(paths, layouts, lock);
    try {
      await run.#load(analyzeRun(paths.runId, paths.runDir, paths.ledger));
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
    if (a.goodBytes === 0) fsyncDir(this.paths.runDir);
    this.#projected = a.state;
    this.#pending = [];
    if (a.projection.kind === 'stale') {
      this.#projected = a.projection.previous;
      this.#pending = a.projection.events;
      this.#rebuild = a.projection.rebuild;
      try {
        await this.#project();
      } catch (err) {
        // The ledger is fine: report, keep the projection stale, retry on the next commit.
        this.#warnings.push(
          `re-projection failed (${(err as Error).message}); retried on the next commit`,
        );
      }
    }
  }

  /** The run as loaded: state, warnings found when opening, corruption if any. */
  loaded(): LoadedRun {
    if (this.#state === null) throw new CorruptStateError(`run ${this.paths.runId} has no events`);
    return { state: this.#state, warnings: [...this.#warnings], corrupt: this.#corrupt };
  }

  /** True when the run has no committed command yet (a fresh folder). */
  get isEmpty(): boolean {
    return this.#state === null;
  }

  /** Decides and commits one command; a known key returns the first outcome. */
  async commit(key: string, command: Command): Promise<CommitResult> {
    if (this.#corrupt) {
      throw new CorruptStateError(
        `run ${this.paths.runId} is blocked: ${this.#corrupt.reason}; nothing was committed (repair it explicitly)`,
      );
    }
    if (this.#pending.length > 0 || this.#rebuild) await this.#project();
    const seen = this.#keys.get(key);
    if (seen !== undefined) return this.#duplicate(seen, key, command);
    const decision = decide(this.#state, command);
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
    this.#append(formatLedgerLine(entry));
    this.#entries.push(entry);
    this.#keys.set(key, this.#entries.length - 1);
    this.#state = next;
    this.#pending.push(...decision.events);
    await this.#project();
    const { events, effects } = decision;
    return { ok: true, state: next, events, effects, duplicate: false };
  }

  #duplicate(index: number, key: string, command: Command): CommitResult {
    const entry = this.#entries[index]!;
    if (entry.command !== command.type) {
      throw new ConflictError(
        `idempotency key ${key} was already used for ${entry.command}, not ${command.type}`,
      );
    }
    const state =
      index === this.#entries.length - 1
        ? this.#state
        : replayEntries(this.#entries.slice(0, index + 1)).state;
    if (state === null) {
      throw new CorruptStateError(`run ${this.paths.runId}: key ${key} has no state`);
    }
    return { ok: true, state, events: entry.events, effects: entry.effects, duplicate: true };
  }

  /** Appends a line; on failure cuts the file back so no half line stays before the next one. */
  #append(line: string): void {
    const writer = this.#writer!;
    try {
      writer.append(line);
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

  /** Writes every applicable layout, native `run.json` last (it marks the projection complete). */
  async #project(): Promise<void> {
    const state = this.#state;
    if (state === null) return;
    const ctx = {
      runDir: this.paths.runDir,
      workspace: state.workspace,
      events: this.#pending,
      previous: this.#projected,
      rebuild: this.#rebuild,
    };
    for (const layout of this.#layouts) {
      const applies = layout.appliesTo ? layout.appliesTo(state) : layout.name === state.layout;
      if (applies) await layout.project(state, ctx);
    }
    await nativeLayout.project(state, ctx);
    this.#projected = state;
    this.#pending = [];
    this.#rebuild = false;
  }

  /**
   * Explicit repair of a corrupt run: keeps the ledger's good prefix (the whole file is first
   * copied to `ledger.jsonl.corrupt-<stamp>`) and rebuilds every projection from it.
   */
  async repair(stamp: string, backup: (from: string, to: string) => void): Promise<void> {
    const c = this.#corrupt;
    if (c === null) return;
    if (!c.repairable) {
      throw new CorruptStateError(`run ${this.paths.runId}: ${c.reason}; cannot repair it`);
    }
    backup(this.paths.ledger, `${this.paths.ledger}.corrupt-${stamp}`);
    const a = analyzeRun(this.paths.runId, this.paths.runDir, this.paths.ledger);
    const state = replayEntries(a.entries).state;
    await this.#load({
      ...a,
      state,
      corrupt: null,
      warnings: [
        `repaired: ${c.reason}; kept ${a.entries.length} ledger lines, backup ${path.basename(this.paths.ledger)}.corrupt-${stamp}`,
      ],
      projection: {
        kind: 'stale',
        previous: null,
        events: a.entries.flatMap((e) => e.events),
        rebuild: true,
      },
    });
  }

  /** Closes the ledger and releases the lock file. */
  close(): void {
    this.#writer?.close();
    this.#writer = null;
    this.#lock.release();
  }
}
