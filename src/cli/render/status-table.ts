/** `phasebridge status` without a run: one line per indexed run (pure). */
import type { RunIndexRecord } from '../../db/repositories/index.ts';
import { alignColumns, formatInstant } from './format.ts';

/** The hint shown when there is no run to list. */
export const NO_RUNS_HINT =
  'no runs yet; start one with `phasebridge run demo --workspace DIR --spec "what to build"`';

/** The runs table: RUN, WORKFLOW, STATUS, LAYOUT, UPDATED, WORKSPACE (newest first as given). */
export function renderRunsTable(runs: readonly RunIndexRecord[]): string[] {
  if (runs.length === 0) return [NO_RUNS_HINT];
  const header = ['RUN', 'WORKFLOW', 'STATUS', 'LAYOUT', 'UPDATED', 'WORKSPACE'];
  const rows = runs.map((r) => [
    r.id,
    r.workflowId,
    r.status,
    r.layout,
    formatInstant(r.updatedAt),
    r.workspace,
  ]);
  return alignColumns([header, ...rows]);
}
