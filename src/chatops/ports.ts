/**
 * What chatops needs from the orchestrator (src/jobs/orchestrator/): only the calls it makes,
 * as an interface the real `Orchestrator` satisfies as-is. The value types are the
 * orchestrator's own.
 */
import type { Channel, Platform } from '../bridges/channel.ts';
import type { Repositories, RunIndexRecord } from '../db/repositories/index.ts';
import type { RunState } from '../engine/model.ts';
import type { CommitResult } from '../engine/store/types.ts';
import type {
  CommandInput,
  RunNotice,
  RunUpdate,
  StartRunInput,
  StepProgress,
  UpdateListener,
  WorkflowInfo,
} from '../jobs/orchestrator/index.ts';
import type { InputFile } from '../jobs/orchestrator/run-inputs.ts';
import type { Log } from '../log.ts';
import type { InputLimits } from './input-files.ts';

export type { CommandInput, RunNotice, RunUpdate, StartRunInput, StepProgress, WorkflowInfo };

/** The orchestrator calls chatops makes. */
export interface ChatOpsOrchestrator {
  /** Starts a run; the same key returns the same run. */
  startRun(input: StartRunInput): Promise<RunState>;
  /** Saves checked files in a run's inputs folder (a guidance reply's); returns their paths. */
  saveInputs?(runId: string, files: readonly InputFile[]): Promise<string[]>;
  /** Commits a command to a run under an idempotency key. */
  command(runId: string, key: string, command: CommandInput): Promise<CommitResult>;
  /** A run's state; NotFoundError when unknown. */
  getRun(runId: string): Promise<RunState>;
  /** Indexed runs, newest first. */
  listRuns(filter?: {
    status?: string;
    workspace?: string;
    originChat?: string;
    limit?: number;
  }): Promise<RunIndexRecord[]>;
  /** Workflows usable in a workspace. */
  listWorkflows(workspace?: string): Promise<WorkflowInfo[]>;
  /** Path of a step's log file. */
  logPath(runId: string, stepId: string, attempt?: number): Promise<string>;
  /** Subscribes to run updates (every process's commits in a bridge); returns the unsubscribe function. */
  onUpdate(listener: UpdateListener): () => void;
  /** Subscribes to notices about runs (not commits); returns the unsubscribe function. */
  onNotice(listener: (n: RunNotice) => void): () => void;
  /** Subscribes to step progress lines; returns the unsubscribe function. */
  onProgress(listener: (p: StepProgress) => void): () => void;
}

/** Options of `ChatOps`. */
export interface ChatOpsOptions {
  orchestrator: ChatOpsOrchestrator;
  repos: Repositories;
  channels: ReadonlyMap<Platform, Channel>;
  log: Log;
  /** The workspace `pair` binds a chat to (the serve's default workspace). */
  defaultWorkspace: string;
  /** Minimum time between two edits of one status message (default 1000 ms). */
  editIntervalMs?: number;
  /** Time between two looks at the followed codexclaw workspaces (default 500 ms). */
  followIntervalMs?: number;
  /**
   * How often bridge.db is looked at for tool approvals (`permissions: ask`) no push brought,
   * and for expired ones; default 1000 ms (pushed requests are shown at once).
   */
  toolApprovalIntervalMs?: number;
  /** Time source (default `() => new Date()`). */
  clock?: () => Date;
  /** The console's public URL: checkpoints and answers link to `<url>/runs/<id>`. */
  consoleUrl?: string;
  /** Time between two looks at running steps' logs for their latest activity (default 500 ms). */
  activityIntervalMs?: number;
  /** Caps on attached files and files agents send (default 10 MiB each, 5 a message). */
  inputLimits?: InputLimits;
}
