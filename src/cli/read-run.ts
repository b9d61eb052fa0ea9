/**
 * Reads a run's state for display without taking its lock: the runs index gives the workspace,
 * the native `run.json` the state, so `status` and `logs` never contend with the process that
 * drives the run. When run.json is missing or unreadable, the Orchestrator loads (and repairs) it.
 */
import type { RunIndexRecord } from '../db/repositories/index.ts';
import { nativeRunDir, readRunJson } from '../engine/layouts/native.ts';
import type { RunState } from '../engine/model.ts';
import { isValidRunId } from '../engine/store/run-id.ts';
import { NotFoundError } from '../errors.ts';
import type { CliContext } from './context.ts';
import { withOrchestrator } from './orchestrator-context.ts';

/** The index record of a run; NotFoundError naming where to look when it is unknown. */
export async function findRunRecord(ctx: CliContext, runId: string): Promise<RunIndexRecord> {
  const record = isValidRunId(runId) ? await (await ctx.repos()).runs.get(runId) : null;
  if (!record) {
    throw new NotFoundError(`no run '${runId}'; \`phasebridge status\` lists the runs`);
  }
  return record;
}

/** The run's index record and its state as last projected to run.json (see the file comment). */
export async function readRun(
  ctx: CliContext,
  runId: string,
): Promise<{ record: RunIndexRecord; state: RunState }> {
  const record = await findRunRecord(ctx, runId);
  const read = readRunJson(nativeRunDir(record.workspace, record.id));
  if (read.kind === 'ok') return { record, state: read.state };
  const state = await withOrchestrator(ctx, { worker: false }, ({ orchestrator }) =>
    orchestrator.getRun(runId),
  );
  return { record, state };
}
