/** Public types of the orchestrator (see /work/briefs/orchestrator-api.md). */
import type { AnyBridgeDb } from '../../db/migrator.ts';
import type { RunEvent } from '../../engine/events.ts';
import type { Actor, Layout, RunState } from '../../engine/model.ts';
import type { Log } from '../../log.ts';
import type { JobQueue } from '../queue/port.ts';
import type { InputFile } from './run-inputs.ts';

export type { CommandInput, DistributiveOmit } from './job-results.ts';

/** Emitted after every accepted (non-duplicate) commit, in the process that committed it. */
export interface RunUpdate {
  runId: string;
  state: RunState;
  events: readonly RunEvent[];
}

/** A run update listener; a returned promise is awaited before the feed moves on. */
export type UpdateListener = (u: RunUpdate) => void | Promise<void>;

/** Something the chats following a run should be told that is not a commit. */
export interface RunNotice {
  runId: string;
  /** One line for people, e.g. why a hand edit was not applied. */
  text: string;
}

/**
 * A `::progress <text>` line of a running step (not persisted in the ledger). For a trigger
 * sub-agent `stepId` is `<stepId>+trigger`.
 */
export interface StepProgress {
  runId: string;
  stepId: string;
  attempt: number;
  text: string;
}

/** Options of Orchestrator.create. */
export interface OrchestratorOptions {
  /** bridge.db (runs index, agents, jobs table for the sqlite driver); not closed by the orchestrator. */
  db: AnyBridgeDb;
  /** The job queue (sqlite or bullmq); not closed by the orchestrator. */
  queue: JobQueue;
  log: Log;
  /** PHASEBRIDGE_HOME (workflows/ there are found too). */
  home: string;
  /** Config SECRET_ENV_NAMES: never passed to agents. */
  secretEnvNames?: readonly string[];
  clock?: () => Date;
  /**
   * Run an in-process worker (default `{ concurrency: 2 }`); false when only separate
   * `phasebridge worker` processes run jobs.
   */
  worker?: { concurrency: number } | false;
  /**
   * While false the in-process worker takes no new job (other workers do): a leader whose lease
   * went unrenewed for a while, so it never starts a step just as a new leader takes over.
   */
  takesJobs?: () => boolean;
  /** SIGTERM → SIGKILL grace for agents of the in-process worker (default 5 s). */
  killGraceMs?: number;
  /** Agents of the in-process worker run this much below our CPU priority (default 0). */
  agentNice?: number;
  /**
   * Follow every process's commits (a bridge): updates of commits made elsewhere are delivered
   * like this process's own, and the delivered position is persisted. Default off (CLI).
   */
  feed?: { pollMs?: number } | false;
  /**
   * Watch unfinished runs while running (a bridge): template.json hand edits every `intervalMs`
   * (500 ms), lost jobs every `leaseCheckMs` (10 s). Default off (CLI).
   */
  supervise?: { intervalMs?: number; leaseCheckMs?: number } | false;
  /**
   * How workers reach run workspaces (default `shared`): `git` queues jobs naming the
   * workspace's `origin` remote and the run branch's commit, and lands what workers push.
   */
  workspaceMode?: 'shared' | 'git';
  /**
   * What a completed coordinator session's `.coordinator/` becomes when the workflow has no
   * `coordinator.onComplete` (PHASEBRIDGE_COORDINATOR_ON_COMPLETE; default archive).
   */
  coordinatorOnComplete?: 'archive' | 'remove';
  /**
   * On close, mark the session end of every unfinished flow and coordinator run (flow's
   * `session_end`, state.json's `updated_at`): the bridge (`serve`) sets it, CLI processes not.
   */
  endSessionsOnClose?: boolean;
  /** Called when an in-process worker's agent process exists (diagnostics, benchmarks). */
  onAgentSpawn?: (info: { jobId: string; runId: string; pid: number }) => void;
}

/** What startRun needs. */
export interface StartRunInput {
  /** Workflow id (built-in 'demo', or <workspace|home>/workflows/<id>.workflow.yaml) or a .yaml path. */
  workflow: string;
  workspace: string;
  spec: string;
  actor: Actor;
  /** Chat ref the run was started from. */
  originChat?: string;
  track?: string;
  conditions?: string[];
  /** After a crash mid-step: run that step again (default) or block the run for a human. */
  resumeFromLastStep?: boolean;
  layout?: Layout;
  /** Idempotency key (e.g. the chat update id): the same key returns the same run. */
  key?: string;
  /** Files the requester attached, already checked (chatops/input-files.ts); saved in `inputs/`. */
  inputs?: readonly InputFile[];
}
