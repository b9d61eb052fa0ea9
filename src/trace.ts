/**
 * Stage timestamps of the approval → next agent spawned path, published on a diagnostics
 * channel (`phasebridge:stage`). Nothing is built or sent unless someone subscribes
 * (`bench/queue-latency.ts --stages` does), so production pays one `hasSubscribers` check per
 * stage. Stages are keyed by run id: a job's id starts with its run's.
 */
import diagnostics from 'node:diagnostics_channel';

/** The stages, in path order (see docs/performance.md, "Where the time goes"). */
export const STAGES = [
  /** Orchestrator.command was called. */
  'command',
  /** The run's driver mutex is held (other commits of the run are done). */
  'locked',
  /** The run is open for writing: lock file taken, ledger read and replayed. */
  'opened',
  /** decide + evolve done; the ledger line is about to be appended. */
  'decided',
  /** The ledger line is fsynced: the command is committed. */
  'durable',
  /** The job's agent and workspace are resolved. */
  'prepared',
  /** The queue row is written; the worker was woken. */
  'enqueued',
  /** A worker claimed the job. */
  'claimed',
  /** The processor resolved the workspace, agent and log placement. */
  'placed',
  /** The directive file was reset and the prompt file written. */
  'files',
  /** child_process.spawn is about to be called. */
  'spawning',
  /** The child's 'spawn' event: the agent process exists. */
  'spawned',
] as const;

/** One stage name. */
export type Stage = (typeof STAGES)[number];

/** What the channel carries. */
export interface StageMark {
  readonly runId: string;
  readonly stage: Stage;
  /** performance.now() when the stage was reached. */
  readonly at: number;
}

/** The channel's name (subscribe with diagnostics_channel.subscribe). */
export const STAGE_CHANNEL = 'phasebridge:stage';

const channel = diagnostics.channel(STAGE_CHANNEL);

/** Marks that run `runId` reached `stage` (a no-op without subscribers). */
export function markStage(runId: string, stage: Stage): void {
  if (!channel.hasSubscribers) return;
  const mark: StageMark = { runId, stage, at: performance.now() };
  channel.publish(mark);
}
