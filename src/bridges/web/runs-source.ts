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
  readonly createdAt: number;
  readonly updatedAt: number;
  readonly finishedAt: number | null;
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
  readonly checkpoint: { readonly stepId: string; readonly reason: string } | null;
  readonly blocked?: { readonly reason: string };
  readonly outcome?: { readonly reason: string };
}

/** The orchestrator calls the runs pages make (the real Orchestrator fits as is). */
export interface RunsReader {
  listRuns(filter?: { limit?: number }): Promise<readonly RunListItem[]>;
  /** NotFoundError when unknown. */
  getRun(runId: string): Promise<RunView>;
  logPath(runId: string, stepId: string, attempt?: number): Promise<string>;
}

/** RunsReader plus the path of a run's ledger. */
export interface RunsSource extends RunsReader {
  ledgerPath(runId: string): Promise<string>;
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

/** The runs pages' source over an orchestrator: the ledger is `<run folder>/ledger.jsonl`. */
export function orchestratorRunsSource(reader: RunsReader): RunsSource {
  return {
    listRuns: (filter) => reader.listRuns(filter),
    getRun: (runId) => reader.getRun(runId),
    logPath: (runId, stepId, attempt) => reader.logPath(runId, stepId, attempt),
    ledgerPath: async (runId) => {
      const run = await reader.getRun(assertSafeId('run', runId));
      return path.join(nativeRunDir(run.workspace, run.id), NATIVE_FILES.ledger);
    },
  };
}
