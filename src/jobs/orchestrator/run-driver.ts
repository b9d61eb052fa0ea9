/**
 * Drives runs: every command goes through here, one run at a time (a per-run mutex held from
 * the commit until its effects are carried out, so a cancel is never overtaken by the enqueue it
 * cancels). After each accepted commit: effects → RunUpdate → runs index; after every call the
 * run's lock is released when the run is idle (awaiting, blocked, terminal), so a CLI process
 * and `serve` can take turns on it.
 */
import type { RunFeedStore } from '../../db/repositories/run-feed.ts';
import type { RunIndexInput, RunsRepo } from '../../db/repositories/runs.ts';
import type { Effect } from '../../engine/events.ts';
import { KeyedMutex } from '../../engine/ledger/keyed-mutex.ts';
import { isTerminal, type Layout, type RunState } from '../../engine/model.ts';
import type { RunStore } from '../../engine/store/run-store.ts';
import type { CommitResult } from '../../engine/store/types.ts';
import { NotFoundError } from '../../errors.ts';
import type { Log } from '../../log.ts';
import { markStage } from '../../trace.ts';
import { errorMessage } from '../queue/outcome.ts';
import { abandonedTriggerJob, type EffectRunner } from './effects.ts';
import type { ExpiryTimers } from './expiry-timers.ts';
import type { CommandInput, KeyedCommand } from './job-results.ts';
import { describeLockConflict, type RunStores } from './run-stores.ts';
import type { RunUpdate } from './types.ts';

/** Where a run lives. */
export interface RunLocation {
  workspace: string;
  layout: Layout;
}

/** True when nothing happens to the run until a human (or a timer) acts. */
export function isIdle(state: RunState): boolean {
  return state.status !== 'active';
}

/** What the driver needs. */
export interface RunDriverDeps {
  stores: RunStores;
  runs: RunsRepo;
  effects: EffectRunner;
  timers: ExpiryTimers;
  log: Log;
  clock: () => Date;
  emit(update: RunUpdate): void;
  /** Where accepted commits are recorded for other processes' change feeds. */
  changes?: RunFeedStore;
}

/** Hooks of one commit. */
export interface CommitHooks {
  /** Runs after an accepted commit, before its effects (e.g. write the spec file, index the run). */
  beforeEffects?(state: RunState): Promise<void> | void;
}

/** Serialises and carries out the commits of every run. */
export class RunDriver {
  readonly #deps: RunDriverDeps;
  readonly #mutex = new KeyedMutex();
  readonly #where = new Map<string, RunLocation>();
  /** Each run's state after our last commit (to notice triggers a commit abandoned). */
  readonly #last = new Map<string, RunState>();
  readonly #indexPending = new Map<string, RunState>();
  /** Every accepted commit since the last index write, for the change rows. */
  #changes: { runId: string; seq: number }[] = [];
  #indexTimer: NodeJS.Immediate | undefined;
  #indexChain: Promise<void> = Promise.resolve();

  constructor(deps: RunDriverDeps) {
    this.#deps = deps;
  }

  /** Records where a run lives (saves an index lookup). */
  remember(runId: string, where: RunLocation): void {
    this.#where.set(runId, where);
  }

  /** Where run `runId` lives, from memory or the runs index; NotFoundError when unknown. */
  async locate(runId: string): Promise<RunLocation> {
    const known = this.#where.get(runId);
    if (known) return known;
    const row = await this.#deps.runs.get(runId);
    if (row === null) throw new NotFoundError(`run ${runId} not found`);
    const where: RunLocation = { workspace: row.workspace, layout: row.layout as Layout };
    this.#where.set(runId, where);
    return where;
  }

  /** The store holding run `runId`. */
  async storeOf(runId: string): Promise<RunStore> {
    return this.#deps.stores.for((await this.locate(runId)).workspace);
  }

  /** The run's current state, read without taking its lock. */
  async peek(runId: string): Promise<RunState> {
    return (await (await this.storeOf(runId)).peek(runId)).state;
  }

  /** Commits one command (its `at` from the clock) and carries out what follows. */
  async commit(
    runId: string,
    key: string,
    input: CommandInput,
    hooks: CommitHooks = {},
  ): Promise<CommitResult> {
    const store = await this.storeOf(runId);
    return this.#mutex.run(runId, () => {
      markStage(runId, 'locked');
      return this.#released(store, runId, () => this.#commitOne(store, runId, key, input, hooks));
    });
  }

  /**
   * Plans commands from the run's current state and commits them in order under one hold of
   * the run's mutex (a job's start, then its result). Rejections (stale reports) are logged.
   */
  async commitPlanned(runId: string, plan: (state: RunState) => KeyedCommand[]): Promise<void> {
    const store = await this.storeOf(runId);
    await this.#mutex.run(runId, () =>
      this.#released(store, runId, async () => {
        let state: RunState | null = (await this.#load(store, runId)).state;
        for (const { key, command } of plan(state)) {
          const r = await this.#commitOne(store, runId, key, command, {});
          if (!r.ok) {
            this.#deps.log.debug(
              { runId, key, why: r.rejection.message },
              'job report not applied',
            );
          }
          state = r.state;
        }
        return { state };
      }),
    );
  }

  /**
   * Carries out a ledger effect again, outside any commit (requeue.ts): under the run's mutex, so
   * after a commit of this process in flight, and only while `wanted` holds for the run's state
   * then. Takes no run lock (another live process may hold it) and writes no file.
   */
  async redo(
    runId: string,
    effect: Effect,
    wanted: (state: RunState) => boolean | Promise<boolean>,
  ): Promise<boolean> {
    return this.#mutex.run(runId, async () => {
      const state = await this.peek(runId);
      if (!(await wanted(state))) return false;
      await this.#deps.effects.run(state, [effect]);
      return true;
    });
  }

  /** Releases the run's lock if it is idle (after start-up reconciliation loaded it). */
  async settle(runId: string): Promise<void> {
    const store = await this.storeOf(runId);
    await this.#mutex.run(runId, () =>
      this.#released(store, runId, async () => ({ state: (await this.#load(store, runId)).state })),
    );
  }

  /** Writes pending runs index updates now. */
  async flushIndex(): Promise<void> {
    if (this.#indexTimer !== undefined) {
      clearImmediate(this.#indexTimer);
      this.#indexTimer = undefined;
      this.#indexChain = this.#indexChain.then(() => this.#writeIndex());
    }
    await this.#indexChain;
  }

  /** Waits for every queued commit and index write. */
  async drain(): Promise<void> {
    await this.#mutex.drain();
    await this.flushIndex();
  }

  /** Indexes a new run at once (with the fields only the start knows). */
  async indexStart(state: RunState, originChat: string | undefined): Promise<void> {
    await this.#deps.runs.upsert({
      ...indexRow(state),
      ...(originChat === undefined ? {} : { originChat }),
    });
  }

  async #load(store: RunStore, runId: string) {
    try {
      return await store.load(runId);
    } catch (err) {
      throw describeLockConflict(err, runId);
    }
  }

  /** Runs `fn`, then releases the run's lock when it is idle, or when `fn` failed. */
  async #released<T extends { state: RunState | null }>(
    store: RunStore,
    runId: string,
    fn: () => Promise<T>,
  ): Promise<T> {
    let result: T;
    try {
      result = await fn();
    } catch (err) {
      await store.release(runId);
      throw err;
    }
    if (result.state === null || isIdle(result.state)) await store.release(runId);
    return result;
  }

  async #commitOne(
    store: RunStore,
    runId: string,
    key: string,
    input: CommandInput,
    hooks: CommitHooks,
  ): Promise<CommitResult> {
    const at = this.#deps.clock().toISOString();
    let r: CommitResult;
    try {
      // The ledger line is durable when this returns; run.json waits until the jobs are queued.
      r = await store.commit(runId, key, { ...input, at }, { deferProjection: true });
    } catch (err) {
      throw describeLockConflict(err, runId);
    }
    this.#warnProjection(runId, r.ok ? r.warnings : undefined);
    if (!r.ok || r.duplicate) return r;
    const previous = this.#last.get(runId);
    this.#last.set(runId, r.state);
    for (const e of r.events) {
      if (e.type === 'checkpointResolved' || e.type === 'checkpointWithdrawn') {
        this.#deps.timers.disarm(runId, e.checkpointId);
      }
    }
    if (isTerminal(r.state.status)) this.#last.delete(runId);
    const update = { runId, state: r.state, events: r.events };
    let early = false;
    let late: string | null = null;
    try {
      // A start's spec file and index row (its origin chat) come first: listeners read them.
      await hooks.beforeEffects?.(r.state);
      // The ledger line is durable, so the chats may show the commit now: a person who pressed
      // waits for it, and the next agent's spawn (a synchronous fork) and run.json's fsyncs
      // took ~25 ms of a ~60 ms press → edit. Updates still leave in commit order (under the
      // run's mutex), listeners read the state from the ledger (never run.json), and a crash
      // before the enqueue is requeued at start-up. An idle state (nothing to queue) is told
      // after run.json, as before: whoever waits for the run to be idle finds it on disk.
      early = !isIdle(r.state);
      if (early) this.#deps.emit(update);
      await this.#deps.effects.run(r.state, r.effects);
      const abandoned = abandonedTriggerJob(previous, r.state, r.events);
      if (abandoned !== null) await this.#deps.effects.cancel(abandoned);
    } finally {
      // run.json after the enqueue (the worker claims and spawns meanwhile: approval → spawn
      // waits for one fsync, the ledger's), durable before the commit's caller is answered.
      late = await store.project(runId);
      this.#warnProjection(runId, late === null ? undefined : [late]);
    }
    if (!early) this.#deps.emit(update);
    this.#scheduleIndex(r.state);
    // The caller hears of a failed projection as before (its reply says what failed).
    return late === null ? r : { ...r, warnings: [...(r.warnings ?? []), late] };
  }

  #warnProjection(runId: string, warnings: readonly string[] | undefined): void {
    if (warnings === undefined || warnings.length === 0) return;
    this.#deps.log.warn({ runId, warnings }, 'committed; a projection failed and is retried');
  }

  /**
   * Index writes wait for a setImmediate: the in-process worker, woken by the enqueue just
   * before, claims its job and spawns the agent first (the approval → spawn hot path).
   */
  #scheduleIndex(state: RunState): void {
    this.#indexPending.set(state.id, state);
    this.#changes.push({ runId: state.id, seq: state.seq });
    this.#indexTimer ??= setImmediate(() => {
      this.#indexTimer = undefined;
      this.#indexChain = this.#indexChain.then(() => this.#writeIndex());
    });
  }

  async #writeIndex(): Promise<void> {
    const batch = [...this.#indexPending.values()];
    this.#indexPending.clear();
    const changes = this.#changes;
    this.#changes = [];
    try {
      await this.#deps.changes?.record(changes);
    } catch (err) {
      // Other bridges then see this commit through their periodic checks, a little later.
      this.#deps.log.warn({ err: errorMessage(err) }, 'change rows not recorded');
    }
    for (const state of batch) {
      try {
        await this.#deps.runs.updateStatus(state.id, state.status, Date.parse(state.updatedAt));
      } catch (err) {
        if (!(err instanceof NotFoundError)) {
          this.#deps.log.warn(
            { runId: state.id, err: errorMessage(err) },
            'runs index update failed',
          );
          continue;
        }
        await this.#deps.runs.upsert(indexRow(state)).catch((e: unknown) => {
          this.#deps.log.warn(
            { runId: state.id, err: errorMessage(e) },
            'runs index insert failed',
          );
        });
      }
    }
  }
}

/** The runs index row of a state. */
export function indexRow(state: RunState): RunIndexInput {
  return {
    id: state.id,
    workflowId: state.workflow.id,
    workspace: state.workspace,
    layout: state.layout,
    status: state.status,
    startedBy: state.startedBy.id,
    createdAt: Date.parse(state.createdAt),
    updatedAt: Date.parse(state.updatedAt),
    spec: state.spec,
  };
}
