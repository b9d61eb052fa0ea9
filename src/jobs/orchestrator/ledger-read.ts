/** Reads a run's ledger without locking it, for the change feed. */
import path from 'node:path';
import { NATIVE_FILES } from '../../engine/layouts/native.ts';
import { analyzeRun } from '../../engine/store/run-analysis.ts';
import type { RunStore } from '../../engine/store/run-store.ts';
import { NotFoundError } from '../../errors.ts';
import type { LedgerRead } from './run-feed.ts';

/** The run's replayed state and its good ledger entries (a torn tail is left out). */
export function readRunLedger(store: RunStore, runId: string): LedgerRead {
  const runDir = store.runDir(runId);
  const a = analyzeRun(runId, runDir, path.join(runDir, NATIVE_FILES.ledger));
  if (a.state === null) throw new NotFoundError(`run ${runId} not found`);
  return { state: a.state, entries: a.entries };
}
