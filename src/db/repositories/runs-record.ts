/** A run as the index holds it, the statuses that end a run, and the row-to-record mapping. */
import type { Row, RunIndexStatus } from '../schema.ts';

/** Statuses that never change again; reaching one sets `finishedAt`. */
export const TERMINAL_RUN_STATUSES: readonly RunIndexStatus[] = [
  'completed',
  'failed',
  'cancelled',
];

/** One indexed run. */
export interface RunIndexRecord {
  id: string;
  workflowId: string;
  workspace: string;
  layout: string;
  status: RunIndexStatus;
  /** The starter's immutable actor id, e.g. 'telegram:42'. */
  startedBy: string | null;
  /** The starter as people know them (set by the console's list, see namedRunsIndex). */
  startedByName?: string;
  /** The chat ref the run was started from. */
  originChat: string | null;
  createdAt: number;
  updatedAt: number;
  finishedAt: number | null;
  /** The run's specification, cut to SPEC_INDEX_CHARS (null when indexed before 0010). */
  spec: string | null;
}

/** How much of a run's specification the index keeps for search. */
export const SPEC_INDEX_CHARS = 500;

/** The record of one `runs` row. */
export function toRunIndexRecord(row: Row<'runs'>): RunIndexRecord {
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
