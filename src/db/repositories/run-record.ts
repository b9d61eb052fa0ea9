/**
 * A `runs` row as the index record the CLI and the console show. Apart from runs.ts (and Kysely):
 * the CLI's fast `status` (src/cli/fast-status.ts) reads the rows with better-sqlite3 alone and
 * must map them exactly as the repository does.
 */
import type { Row } from '../schema.ts';
import type { RunIndexRecord } from './runs.ts';

/** The index record of one `runs` row (archived_at left out: the archive's own calls read it). */
export function runRecordOf(row: Row<'runs'>): RunIndexRecord {
  return {
    id: row.id,
    workflowId: row.workflow_id,
    workspace: row.workspace,
    layout: row.layout,
    status: row.status,
    startedBy: row.started_by,
    originChat: row.origin_chat,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    finishedAt: row.finished_at,
    spec: row.spec ?? null,
  };
}
