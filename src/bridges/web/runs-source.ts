/**
 * What the runs pages read, typed structurally: the Orchestrator's `listRuns`, `getRun` and
 * `logPath` fit as they are, so this folder needs no engine import. The ledger's path is the one
 * piece of run-folder knowledge: `orchestratorRunsSource` adds it from the native layout, which
 * every run has whatever its layout.
 */

import path from 'node:path';
import { NATIVE_FILES, nativeRunDir } from '../../engine/layouts/native.ts';
import { InvalidInputError } from '../../errors.ts';

/** A run as listed (a row of bridge.db's runs index; times in ms since the epoch). */
export interface RunListItem {
  readonly id: string;
  readonly workflowId: string;
  readonly workspace: string;
  readonly status: string;
  readonly startedBy: string | null;
  /** The starter as people know them (see personName); `startedBy` stays the id. */
  readonly startedByName?: string;
  readonly createdAt: number;
  readonly updatedAt: number;
  readonly finishedAt: number | null;
  readonly spec?: string | null;
}

/** The runs list's query (see RunsRepo.search). */
export interface RunListQuery {
  readonly status?: RunIndexStatus;
  readonly workflowId?: string;
  readonly workspace?: string;
  readonly startedBy?: string;
  readonly originChat?: string;
  /** Runs waiting on a person (awaiting or blocked) that this person started. */
  readonly waitingFor?: string;
  readonly updatedSince?: number;
  readonly updatedBefore?: number;
  readonly text?: string;
  readonly limit: number;
  /** Keyset paging: the page just older than `before`, or just newer than `after`. */
  readonly before?: RunKeyView;
  readonly after?: RunKeyView;
}

/** A run's place in the list's order (see RunsRepo's RunKey). */
export interface RunKeyView {
  readonly updatedAt: number;
  readonly id: string;
}

/** The statuses a run can have (the list's status filter). */
export const RUN_STATUSES = [
  'active',
  'awaiting',
  'blocked',
  'completed',
  'failed',
  'cancelled',
] as const;

/** One of RUN_STATUSES. */
export type RunIndexStatus = (typeof RUN_STATUSES)[number];

/** One page of the runs list and how many runs match in all. */
export interface RunListPage {
  readonly items: readonly RunListItem[];
  /** Matches, counted up to a cap (`totalCapped`: more match). */
  readonly total: number;
  readonly totalCapped?: boolean;
  readonly hasNewer?: boolean;
  readonly hasOlder?: boolean;
}

/** The values the list's filters offer. */
export interface RunListFacets {
  readonly workflows: readonly string[];
  readonly workspaces: readonly string[];
  readonly startedBy: readonly string[];
  /** Chats runs were started from. */
  readonly chats?: readonly string[];
  /** The starters as people know them, by id: the filter shows these, ids stay its values. */
  readonly startedByNames?: Readonly<Record<string, string>>;
}

/** The runs index in bridge.db (RunsRepo fits as is). */
export interface RunsIndex {
  search(q: RunListQuery): Promise<RunListPage>;
  facets(): Promise<RunListFacets>;
}

/** Who did something. */
export interface ActorView {
  readonly id: string;
  readonly name?: string;
}

/** A checkpoint as the run page shows it (a subset of the engine's CheckpointState). */
export interface CheckpointView {
  readonly id: string;
  readonly stepId: string;
  readonly reason: string;
  readonly answers: readonly string[];
  readonly openedAt: string;
  readonly expiresAt?: string;
  /** Set when it expired and was kept open (it can be re-opened). */
  readonly expiredAt?: string;
  readonly policy: { readonly approvals: number; readonly fourEyes: boolean };
  readonly votes: readonly {
    readonly actor: ActorView;
    readonly answer: string;
    readonly reason?: string;
    readonly at: string;
  }[];
  readonly decision?: {
    readonly answer: string;
    readonly by: readonly ActorView[];
    readonly at: string;
    readonly reason?: string;
  };
  readonly withdrawn?: { readonly at: string; readonly reason: string };
  readonly gate?: string;
}

/** The PABCD phase of a codexclaw-layout run. */
export interface PabcdView {
  readonly phase: string;
  readonly since: string;
  readonly flags: {
    readonly interview: boolean;
    readonly auditPassed: boolean;
    readonly checkPassed: boolean;
  };
}

/** Token usage and cost of a step. */
export interface TelemetryView {
  readonly tokensIn: number;
  readonly tokensOut: number;
  readonly cachedTokens: number;
  readonly costUsd: number;
}

/** A step as the run page shows it. */
export interface StepView {
  readonly id: string;
  readonly agent: string;
  readonly status: string;
  readonly attempt: number;
  readonly startedAt?: string;
  readonly finishedAt?: string;
  readonly error?: string;
  readonly excluded?: boolean;
  readonly telemetry: TelemetryView;
}

/** A run as the run page shows it (a subset of the engine's RunState). */
export interface RunView {
  readonly id: string;
  readonly status: string;
  readonly workspace: string;
  readonly layout: string;
  readonly workflow: { readonly id: string; readonly name?: string };
  readonly spec: string;
  readonly startedBy: { readonly id: string; readonly name?: string };
  readonly createdAt: string;
  readonly updatedAt: string;
  readonly steps: readonly StepView[];
  readonly cursor: number;
  readonly checkpoint: CheckpointView | null;
  /** Resolved or withdrawn checkpoints, oldest first. */
  readonly checkpoints?: readonly CheckpointView[];
  /** Why the run waits; `kind` 'paused' is a pause (resume), others a failure (retry). */
  readonly blocked?: { readonly reason: string; readonly kind?: string };
  readonly outcome?: { readonly reason: string; readonly by?: ActorView };
  readonly pabcd?: PabcdView;
}

/** The orchestrator calls the runs pages make (the real Orchestrator fits as is). */
export interface RunsReader {
  listRuns(filter?: { limit?: number }): Promise<readonly RunListItem[]>;
  /** NotFoundError when unknown. */
  getRun(runId: string): Promise<RunView>;
  logPath(runId: string, stepId: string, attempt?: number): Promise<string>;
  /** Calls `listener` with the run id of every committed change; returns the unsubscribe. */
  onUpdate?(listener: (u: { runId: string }) => void): () => void;
}

/** RunsReader plus the path of a run's ledger and step diffs, and the runs index. */
export interface RunsSource extends RunsReader {
  ledgerPath(runId: string): Promise<string>;
  /** The saved diff of a step attempt (written by the worker in a git workspace). */
  diffPath(runId: string, stepId: string, attempt: number): Promise<string>;
  /** The list page's query; without an index the list reads `listRuns` (no filters). */
  readonly index?: RunsIndex;
  /** Subscribes to changes of runs; returns the unsubscribe (a no-op without a feed). */
  onRunChange(listener: (runId: string) => void): () => void;
}

const SAFE_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,199}$/;

/** Refuses ids that could name anything but a run (they end up in file paths). */
export function assertSafeId(kind: string, id: string): string {
  if (!SAFE_ID.test(id) || id.includes('..')) throw new InvalidInputError(`invalid ${kind} id`);
  return id;
}

/** decodeURIComponent that reports a malformed escape as INVALID_INPUT instead of a URIError. */
export function decodePathPart(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    throw new InvalidInputError('malformed URL');
  }
}

/**
 * The runs pages' source over an orchestrator: the ledger is `<run folder>/ledger.jsonl`, a
 * step's diff `logs/<step>-<attempt>.diff` beside its log; `index` (bridge.db's runs table)
 * serves the list's filters and pages.
 */
export function orchestratorRunsSource(reader: RunsReader, index?: RunsIndex): RunsSource {
  return {
    listRuns: (filter) => reader.listRuns(filter),
    getRun: (runId) => reader.getRun(runId),
    logPath: (runId, stepId, attempt) => reader.logPath(runId, stepId, attempt),
    ledgerPath: async (runId) => {
      const run = await reader.getRun(assertSafeId('run', runId));
      return path.join(nativeRunDir(run.workspace, run.id), NATIVE_FILES.ledger);
    },
    diffPath: async (runId, stepId, attempt) => {
      const run = await reader.getRun(assertSafeId('run', runId));
      const logs = path.join(nativeRunDir(run.workspace, run.id), NATIVE_FILES.logs);
      return path.join(logs, `${assertSafeId('step', stepId)}-${attempt}${STEP_DIFF_SUFFIX}`);
    },
    ...(index && { index }),
    onRunChange: (listener) => reader.onUpdate?.((u) => listener(u.runId)) ?? (() => {}),
  };
}

/** A step diff's file name ends in this, after `<step>-<attempt>` (the log's `.log`). */
export const STEP_DIFF_SUFFIX = '.diff';
