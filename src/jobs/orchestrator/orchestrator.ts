/**
 * The Orchestrator: the one object callers (CLI, chatops, serve) drive runs through. Commands
 * are committed by the engine's RunStore (ledger + layouts); the effects they return become queue
 * jobs and timers; job signals (agent started, progress, finished) come back as engine commands.
 *
 *   const o = await Orchestrator.create({ db, queue, log, home });
 *   const run = await o.startRun({ workflow: 'demo', workspace, spec, actor });
 *   await o.waitUntilIdle(run.id);            // awaiting the plan checkpoint
 *   await o.command(run.id, 'cli:…', { type: 'answerCheckpoint', answer: 'approve', actor });
 *   await o.close();
 */
import path from 'node:path';
import type { RunIndexRecord, RunIndexStatus } from '../../db/index.ts';
import { createRepositories, type Repositories } from '../../db/repositories/index.ts';
import { type RunFeedStore, runFeedStoreOf } from '../../db/repositories/run-feed.ts';
import { loadProjectionFactories } from '../../engine/layouts/index.ts';
import type { ProjectionFactory } from '../../engine/layouts/module.ts';
import { findStep, type RunState } from '../../engine/model.ts';
import type { CommitResult } from '../../engine/store/types.ts';
import { InvalidInputError, NotFoundError } from '../../errors.ts';
import type { Log } from '../../log.ts';
import { markStage } from '../../trace.ts';
import { errorMessage } from '../queue/outcome.ts';
import type { JobQueue, Worker } from '../queue/port.ts';
import { AgentResolver } from './agent-resolver.ts';
import { CheckpointExpiry } from './checkpoint-expiry.ts';
import { EffectRunner } from './effects.ts';
import { ExpiryTimers } from './expiry-timers.ts';
import { applyHandEdit, applyHandEditsAtStart } from './hand-edits.ts';
import { JobPreparer } from './job-prep.ts';
import { JobReports } from './job-reports.ts';
import type { CommandInput } from './job-results.ts';
import { JobSignals } from './job-signals.ts';
import { LedgerTails } from './ledger-read.ts';
import { reconcile } from './reconcile.ts';
import { resumeInterrupted } from './resume-interrupted.ts';
import { RunDriver } from './run-driver.ts';
import { RunFeed } from './run-feed.ts';
import { stepLogPath } from './run-files.ts';
import { type InputFile, saveRunInputs } from './run-inputs.ts';
import { RunListeners } from './run-listeners.ts';
import { RunStores } from './run-stores.ts';
import { endSessions } from './session-end.ts';
import { startNewRun } from './start-run.ts';
import { RunSupervisor } from './supervisor.ts';
import { loadTaskList } from './task-jobs.ts';
import type {
  OrchestratorOptions,
  RunNotice,
  RunUpdate,
  StartRunInput,
  StepProgress,
  UpdateListener,
} from './types.ts';
import { withPerson } from './vote-person.ts';
import { startJobWorker } from './worker.ts';
import { type WorkflowInfo, WorkflowRegistry } from './workflow-registry.ts';

export type {
  CommandInput,
  DistributiveOmit,
  OrchestratorOptions,
  RunNotice,
  RunUpdate,
  StartRunInput,
  StepProgress,
  UpdateListener,
} from './types.ts';
export type { WorkflowInfo } from './workflow-registry.ts';

/** Default in-process worker slots. */
const DEFAULT_CONCURRENCY = 2;

/** Drives runs: commands in, effects out, job results back in. */
export class Orchestrator {
  readonly #log: Log;
  readonly #queue: JobQueue;
  readonly #clock: () => Date;
  readonly #repos: Repositories;
  readonly #agents: AgentResolver;
  readonly #prep: JobPreparer;
  readonly #workflows: WorkflowRegistry;
  readonly #coordinatorOnComplete: 'archive' | 'remove' | undefined;
  readonly #endSessionsOnClose: boolean;
  readonly #stores: RunStores;
  readonly #timers: ExpiryTimers;
  readonly #driver: RunDriver;
  readonly #signals: JobSignals;
  readonly #reports: JobReports;
  readonly #expiry: CheckpointExpiry;
  readonly #listeners: RunListeners;
  /** Set in a bridge (`feed` option): every process's commits, in order, exactly once. */
  readonly #feed: RunFeed | null;
  /** Set in a bridge (`supervise` option): hand edits and lost jobs seen while running. */
  readonly #supervisor: RunSupervisor | null;
  #worker: Worker | null = null;
  readonly #workspaceOf = async (runId: string) => (await this.#driver.peek(runId)).workspace;
  #unsubscribe: (() => void)[] = [];
  #closing: Promise<void> | null = null;
  /** Set by relinquishRuns: another bridge leads and owns the runs. */
  #relinquished = false;
  /** Set by takeNoMoreJobs (and relinquishRuns): the in-process worker takes no new job. */
  #leaving = false;

  private constructor(
    opts: OrchestratorOptions,
    projections: readonly ProjectionFactory[],
    changes: RunFeedStore,
  ) {
    this.#log = opts.log;
    this.#listeners = new RunListeners(opts.log);
    this.#queue = opts.queue;
    this.#clock = opts.clock ?? (() => new Date());
    this.#repos = createRepositories(opts.db, { now: () => this.#clock().getTime() });
    this.#agents = new AgentResolver(this.#repos.agents);
    this.#prep = new JobPreparer(this.#agents, opts.workspaceMode ?? 'shared', (ws) =>
      this.#repos.fullAccess.allowed(ws),
    );
    this.#workflows = new WorkflowRegistry({ home: opts.home, log: opts.log });
    this.#coordinatorOnComplete = opts.coordinatorOnComplete;
    this.#endSessionsOnClose = opts.endSessionsOnClose === true;
    this.#stores = new RunStores({
      agentInfo: (n) => this.#agents.info(n),
      clock: this.#clock,
      projections,
      onHandEdit: (runId) => this.#supervisor?.nudge(runId),
    });
    this.#timers = new ExpiryTimers(() => this.#clock().getTime());
    const tails = new LedgerTails();
    this.#feed = opts.feed
      ? new RunFeed({
          repo: changes,
          read: async (runId, since) => tails.read(await this.#driver.storeOf(runId), runId, since),
          deliver: (u) => this.#deliver(u),
          log: opts.log,
          ...(opts.feed.pollMs === undefined ? {} : { pollMs: opts.feed.pollMs }),
        })
      : null;
    const effects = new EffectRunner({
      queue: opts.queue,
      prepare: (state, effect) => this.#prep.prepare(state, effect),
      timers: this.#timers,
      log: opts.log,
      onExpiry: (runId, checkpointId) => this.#expiry.expire(runId, checkpointId),
      onLoadTasks: (state, effect) =>
        loadTaskList(state, effect, opts.workspaceMode === 'git', (plan) =>
          this.#signals.apply(state.id, `task list of ${effect.stepId}`, plan),
        ),
    });
    this.#driver = new RunDriver({
      stores: this.#stores,
      runs: this.#repos.runs,
      effects,
      timers: this.#timers,
      log: opts.log,
      clock: this.#clock,
      emit: (u) => {
        if (this.#feed) void this.#feed.own(u);
        else void this.#deliver(u);
      },
      changes,
    });
    this.#signals = new JobSignals({ driver: this.#driver, log: opts.log });
    this.#expiry = new CheckpointExpiry(this.#timers, this.#signals);
    this.#reports = new JobReports({
      signals: this.#signals,
      listeners: this.#listeners,
      workspaceOf: this.#workspaceOf,
      log: opts.log,
    });
    this.#supervisor = opts.supervise
      ? new RunSupervisor({
          runs: this.#repos.runs,
          driver: this.#driver,
          queue: opts.queue,
          log: opts.log,
          notice: (n) => this.#listeners.notice(n),
          ...opts.supervise,
        })
      : null;
  }

  /** Creates an orchestrator: subscribes to job outcomes, reconciles runs, starts the worker. */
  static async create(opts: OrchestratorOptions): Promise<Orchestrator> {
    const clock = opts.clock ?? (() => new Date());
    const changes = await runFeedStoreOf(opts.db, () => clock().getTime());
    const o = new Orchestrator(opts, await loadProjectionFactories(), changes);
    o.#unsubscribe = [
      opts.queue.onOutcome((id, job, outcome) => o.#reports.outcome(id, job, outcome)),
      opts.queue.onProgress((id, job, data) => o.#reports.report(id, job, data)),
    ];
    try {
      await o.#agents.knownNames(); // fills the engine/model cache the codemachine layout shows
      await reconcile({
        driver: o.#driver,
        stores: o.#stores,
        runs: o.#repos.runs,
        queue: opts.queue,
        log: opts.log,
        armExpiry: (state) => o.#expiry.arm(state),
        knownWorkspaces: async () => [
          ...(await o.#repos.bindings.list()).map((b) => b.workspace),
          ...(await o.#repos.followed.list()).map((f) => f.workspace),
        ],
      });
      const unfinished = await o.#repos.runs.list({ status: ['active', 'awaiting', 'blocked'] });
      await applyHandEditsAtStart(o.#driver, unfinished, opts.log);
      o.#supervisor?.start();
      if (opts.worker !== false) await o.#startWorker(opts);
    } catch (err) {
      await o.close();
      throw err;
    }
    return o;
  }

  /** Saves checked files (a guidance reply's) in a run's inputs folder; returns their paths. */
  async saveInputs(runId: string, files: readonly InputFile[]): Promise<string[]> {
    this.#assertOpen();
    return saveRunInputs(await this.#workspaceOf(runId), runId, files).map((i) => i.path);
  }

  /** Starts a run of a workflow id (or .yaml path) in a workspace; returns its first state. */
  async startRun(input: StartRunInput): Promise<RunState> {
    this.#assertOpen();
    return startNewRun(input, {
      driver: this.#driver,
      stores: this.#stores,
      runs: this.#repos.runs,
      agents: this.#agents,
      workflows: this.#workflows,
      clock: this.#clock,
      coordinatorOnComplete: this.#coordinatorOnComplete,
    });
  }

  /**
   * Commits a command to a run (looked up in the runs index), carries out its effects, emits a
   * RunUpdate. A rejection comes back as `{ ok: false }`; ConflictError when another process
   * drives the run ("run X is being driven by pid N"); NotFoundError for an unknown run.
   */
  async command(runId: string, key: string, command: CommandInput): Promise<CommitResult> {
    this.#assertOpen();
    markStage(runId, 'command');
    if (command.type === 'start') throw new InvalidInputError('start a run with startRun');
    await applyHandEdit(this.#driver, runId, this.#log);
    command = await withPerson(this.#repos.personLinks, command);
    if (command.type === 'resume') {
      const recovered = await resumeInterrupted(this.#driver, this.#queue, runId, key, command);
      if (recovered !== null) return recovered;
    }
    return this.#driver.commit(runId, key, command);
  }

  /** The run's current state (NotFoundError when unknown); takes no lock. */
  async getRun(runId: string): Promise<RunState> {
    return this.#driver.peek(runId);
  }

  /** Runs from the runs index, most recently updated first. */
  async listRuns(
    filter: { status?: string; workspace?: string; originChat?: string; limit?: number } = {},
  ): Promise<RunIndexRecord[]> {
    await this.#driver.flushIndex();
    const { status, workspace, ...rest } = filter;
    return this.#repos.runs.list({
      ...rest,
      ...(status === undefined ? {} : { status: status as RunIndexStatus }),
      ...(workspace === undefined ? {} : { workspace: path.resolve(workspace) }),
    });
  }

  /** Workflows visible from `workspace` (its workflows/, the home's, the built-ins). */
  async listWorkflows(workspace?: string): Promise<WorkflowInfo[]> {
    return this.#workflows.list(workspace);
  }

  /** Path of a step's log file (latest attempt unless given). */
  async logPath(runId: string, stepId: string, attempt?: number): Promise<string> {
    const state = await this.getRun(runId);
    const step = findStep(state, stepId);
    if (!step) throw new NotFoundError(`run ${runId} has no step ${stepId}`);
    const n = attempt ?? step.attempt;
    if (n < 1 || n > step.attempt) {
      throw new NotFoundError(`step ${stepId} of run ${runId} has no attempt ${n} (yet)`);
    }
    return stepLogPath(state.workspace, runId, stepId, n);
  }

  /**
   * Subscribes to run updates; returns the unsubscribe function. In a bridge (`feed`), updates
   * of every process's commits come here, each event once and in order; a listener's promise is
   * awaited before the feed's cursor moves past the update.
   */
  onUpdate(listener: UpdateListener): () => void {
    return this.#listeners.onUpdate(listener);
  }

  /** Subscribes to notices about runs that are not commits (e.g. an unreadable template.json). */
  onNotice(listener: (n: RunNotice) => void): () => void {
    return this.#listeners.onNotice(listener);
  }

  /**
   * Starts the change feed (bridges only): replays commits the chats missed while no bridge
   * ran, then follows other processes' commits. Call after the listeners subscribed.
   */
  async startFeed(): Promise<void> {
    await this.#feed?.start();
  }

  /** Subscribes to progress lines of running steps; returns the unsubscribe function. */
  onProgress(listener: (p: StepProgress) => void): () => void {
    return this.#listeners.onProgress(listener);
  }

  /** Resolves when the run is awaiting, blocked or terminal; rejects when the orchestrator closes. */
  waitUntilIdle(runId: string): Promise<RunState> {
    return this.#listeners.waitUntilIdle(runId, () => this.getRun(runId));
  }

  /**
   * Stops the in-process worker (running steps finish first), drops timers and listeners,
   * waits for pending commits and releases every run lock.
   */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      try {
        await this.#worker?.close();
      } catch (err) {
        this.#log.warn({ err: errorMessage(err) }, 'closing the worker failed');
      }
      for (const off of this.#unsubscribe) off();
      await this.#supervisor?.close();
      await this.#feed?.close();
      this.#signals.close();
      this.#timers.close();
      await this.#driver.drain();
      // Runs given up to a new leader are its sessions now: nothing is written to them here.
      if (this.#endSessionsOnClose && !this.#relinquished)
        await endSessions(this.#repos.runs, this, this.#log, this.#clock());
      await this.#stores.close();
      this.#listeners.failWaiters(new Error('the orchestrator was closed'));
    })();
    return this.#closing;
  }

  /**
   * Another bridge leads now, or is about to: the in-process worker takes no new job from here
   * on (the other workers do); the steps it runs go on. Call relinquishRuns next.
   */
  takeNoMoreJobs(): void {
    this.#leaving = true;
  }

  /**
   * Another bridge leads now (`why`): pending commits end and every run lock is released at
   * once, before this process's stop (which may wait for running steps); from here on every
   * command and commit of this orchestrator is refused with a ConflictError saying `why`.
   */
  async relinquishRuns(why: string): Promise<void> {
    this.#leaving = true;
    this.#relinquished = true;
    this.#signals.close();
    await this.#stores.relinquish(
      `this bridge no longer leads (${why}); its runs are left to the new leader`,
    );
  }

  #assertOpen(): void {
    if (this.#closing) throw new Error('the orchestrator is closed');
  }

  async #startWorker(opts: OrchestratorOptions): Promise<void> {
    // The bridge's own worker carries no labels: steps with `runsOn` wait for a worker that does.
    this.#worker = await startJobWorker({
      queue: this.#queue,
      log: this.#log,
      concurrency: opts.worker ? opts.worker.concurrency : DEFAULT_CONCURRENCY,
      home: opts.home,
      inProcess: true,
      agentEnv: (name) => this.#prep.agentEnv(name),
      ...(opts.secretEnvNames === undefined ? {} : { secretEnvNames: opts.secretEnvNames }),
      ...(opts.killGraceMs === undefined ? {} : { killGraceMs: opts.killGraceMs }),
      ...(opts.agentNice === undefined ? {} : { agentNice: opts.agentNice }),
      onSpawn: (job, pid) => opts.onAgentSpawn?.({ jobId: job.id, runId: job.runId, pid }),
      accepting: () => !this.#leaving && (opts.takesJobs?.() ?? true),
    });
  }

  /** Hands an update to every listener; resolves once their work on it is done. */
  async #deliver(u: RunUpdate): Promise<void> {
    this.#expiry.follow(u);
    await this.#listeners.update(u);
  }
}
