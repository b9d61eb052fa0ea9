/**
 * Reads a run's state for display without taking its lock: the runs index gives the workspace,
 * the run's ledger the state (replayed, never a projection such as run.json, which may be stale
 * or edited by hand), so `status` and `logs` never contend with the process that drives the run.
 */
import type { RunIndexRecord } from '../db/repositories/index.ts';
import type { RunState } from '../engine/model.ts';
import { isValidRunId } from '../engine/store/run-id.ts';
import type { LoadedRun } from '../engine/store/types.ts';
import { NotFoundError } from '../errors.ts';
import type { CliContext } from './context.ts';

/** The index record of a run; NotFoundError naming where to look when it is unknown. */
export async function findRunRecord(ctx: CliContext, runId: string): Promise<RunIndexRecord> {
  const record = isValidRunId(runId) ? await (await ctx.repos()).runs.get(runId) : null;
  if (!record) {
    throw new NotFoundError(`no run '${runId}'; \`phasebridge status\` lists the runs`);
  }
  return record;
}

/** The run's index record and its state replayed from its ledger (see the file comment). */
export async function readRun(
  ctx: CliContext,
  runId: string,
): Promise<{ record: RunIndexRecord; state: RunState; run: LoadedRun }> {
  const record = await findRunRecord(ctx, runId);
  // Loaded here: commands that only import findRunRecord (and `--help`) skip the engine.
  const { RunStore } = await import('../engine/store/run-store.ts');
  const store = new RunStore({ workspace: record.workspace });
  try {
    const run = await store.peek(record.id);
    return { record, state: run.state, run };
  } catch (err) {
    throw await archivedError(ctx, record, err);
  } finally {
    await store.close();
  }
}

/** For a run whose folder `phasebridge archive` packed: where it went, instead of "not found". */
async function archivedError(ctx: CliContext, record: RunIndexRecord, err: unknown) {
  if (!(err instanceof NotFoundError)) return err;
  const at = await (await ctx.repos()).runs.archivedAt(record.id);
  if (at === null) return err;
  const { findArchive } = await import('../archive/run-archive.ts');
  const archive = findArchive(record.workspace, record.id) ?? 'its archive (missing)';
  return new NotFoundError(
    `run ${record.id} was archived on ${new Date(at).toISOString()} to ${archive}; unpack it in ${record.workspace}/.phasebridge/runs to read it`,
  );
}
