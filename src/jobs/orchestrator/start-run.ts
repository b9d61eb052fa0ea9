/**
 * Starting a run: workflow lookup (with the known agents, so a typo in an agent name fails now,
 * not at its step), a fresh run id, the start commit, then — before the first job is enqueued —
 * the native spec file and the runs index row.
 */

import fs from 'node:fs';
import path from 'node:path';
import type { RunsRepo } from '../../db/repositories/runs.ts';
import type { Rejection } from '../../engine/events.ts';
import { layoutModule } from '../../engine/layouts/index.ts';
import { NATIVE_FILES } from '../../engine/layouts/native.ts';
import { readLedger } from '../../engine/ledger/ledger-file.ts';
import type { Layout, RunState } from '../../engine/model.ts';
import { newRunId } from '../../engine/store/run-id.ts';
import type { RunStore } from '../../engine/store/run-store.ts';
import {
  ConflictError,
  IllegalTransitionError,
  InvalidInputError,
  NotFoundError,
  type PhasebridgeError,
  UnauthorizedError,
} from '../../errors.ts';
import type { AgentResolver } from './agent-resolver.ts';
import type { RunDriver } from './run-driver.ts';
import { ensureSpecFile } from './run-files.ts';
import { saveRunInputs } from './run-inputs.ts';
import type { RunStores } from './run-stores.ts';
import type { StartRunInput } from './types.ts';
import type { WorkflowRegistry } from './workflow-registry.ts';

/** What starting a run needs. */
export interface StartRunDeps {
  driver: RunDriver;
  stores: RunStores;
  runs: RunsRepo;
  agents: AgentResolver;
  workflows: WorkflowRegistry;
  clock: () => Date;
  /** The bridge's default for `coordinator.onComplete` (recorded in the run at its start). */
  coordinatorOnComplete?: 'archive' | 'remove' | undefined;
}

/** Runs of a workspace searched for an earlier start with the same idempotency key. */
const KEY_LOOKBACK = 50;

/** The error a rejected command becomes when the caller gets an exception. */
export function rejectionError(r: Rejection): PhasebridgeError {
  switch (r.code) {
    case 'NOT_FOUND':
      return new NotFoundError(r.message);
    case 'INVALID_INPUT':
      return new InvalidInputError(r.message);
    case 'UNAUTHORIZED':
      return new UnauthorizedError(r.message);
    default:
      return new IllegalTransitionError(r.message);
  }
}

/** The text a run id's slug is made from: the spec's first line, else the workflow id. */
export function slugSource(spec: string, workflowId: string): string {
  const line = spec.split('\n').find((l) => l.replace(/[#>*\-\s]/g, '') !== '');
  return line?.trim() ?? workflowId;
}

/** Starts a run; returns its state after the start commit. */
export async function startNewRun(input: StartRunInput, deps: StartRunDeps): Promise<RunState> {
  const workspace = path.resolve(input.workspace);
  if (!(fs.statSync(workspace, { throwIfNoEntry: false })?.isDirectory() ?? false)) {
    throw new NotFoundError(`workspace ${workspace} does not exist or is not a folder`);
  }
  const store = deps.stores.for(workspace);
  if (input.key !== undefined) {
    const earlier = await runStartedWithKey(deps.runs, store, workspace, input.key);
    if (earlier !== null) return earlier;
  }
  const found = await deps.workflows.find(
    input.workflow,
    workspace,
    await deps.agents.knownNames(),
  );
  const layout = input.layout ?? found.layout ?? 'native';
  const start = layoutModule(layout)?.start;
  // The layout may write the bridge's defaults into the run's workflow (see its module).
  const workflow =
    start?.workflow?.(found, { coordinatorOnComplete: deps.coordinatorOnComplete }) ?? found;
  if (start?.onePerWorkspace === true) await assertNoOtherRun(deps.runs, workspace, layout);
  await start?.assertReady?.(workspace);
  const runId = await freshRunId(
    deps.runs,
    store,
    slugSource(input.spec, workflow.id),
    deps.clock(),
  );
  // Saved before the start is committed: the ledger never names a file that is not there.
  const inputs =
    input.inputs !== undefined && input.inputs.length > 0
      ? saveRunInputs(workspace, runId, input.inputs)
      : undefined;
  deps.driver.remember(runId, { workspace, layout });
  // A start without a chosen track follows the layout's default (a coordinator's first track).
  const track = input.track ?? start?.defaultTrack?.(workflow);
  const r = await deps.driver.commit(
    runId,
    input.key ?? `start:${runId}`,
    {
      type: 'start',
      runId,
      workflow,
      workspace,
      layout,
      spec: input.spec,
      ...(inputs === undefined ? {} : { inputs }),
      actor: input.actor,
      ...(track === undefined ? {} : { selectedTrack: track }),
      ...(input.conditions === undefined ? {} : { selectedConditions: input.conditions }),
      ...(input.resumeFromLastStep === undefined
        ? {}
        : { resumeFromLastStep: input.resumeFromLastStep }),
    },
    {
      beforeEffects: async (state) => {
        await ensureSpecFile(workspace, layout, runId, state.spec);
        await deps.driver.indexStart(state, input.originChat);
      },
    },
  );
  if (!r.ok) throw rejectionError(r.rejection);
  return r.state;
}

/** A layout with one state file per workspace (codemachine's template.json): one unfinished run. */
async function assertNoOtherRun(runs: RunsRepo, workspace: string, layout: Layout): Promise<void> {
  const open = await runs.list({ workspace, status: ['active', 'awaiting', 'blocked'] });
  const other = open.find((r) => r.layout === layout);
  if (other) {
    throw new ConflictError(
      `workspace ${workspace} already has an unfinished ${layout} run ${other.id}; cancel it first or use the native layout`,
    );
  }
}

/** A run id not used yet: `<time>-<slug>`, then `-2`, `-3`, … when that second is taken. */
async function freshRunId(
  runs: RunsRepo,
  store: RunStore,
  slug: string,
  now: Date,
): Promise<string> {
  const base = newRunId(slug, now);
  for (let n = 1; n < 1000; n++) {
    const id = n === 1 ? base : `${base}-${n}`;
    if (!fs.existsSync(store.runDir(id)) && (await runs.get(id)) === null) return id;
  }
  throw new ConflictError(`too many runs named ${base}`);
}

/** The run of `workspace` whose start used `key`, if one of the recent ones did. */
async function runStartedWithKey(
  runs: RunsRepo,
  store: RunStore,
  workspace: string,
  key: string,
): Promise<RunState | null> {
  for (const row of await runs.list({ workspace, limit: KEY_LOOKBACK })) {
    const ledger = path.join(store.runDir(row.id), NATIVE_FILES.ledger);
    let first: string | undefined;
    try {
      first = readLedger(ledger).entries[0]?.key;
    } catch {
      continue; // unreadable: it is not the run we look for, and recovery reports it
    }
    if (first === key) return (await store.peek(row.id)).state;
  }
  return null;
}
