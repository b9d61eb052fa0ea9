/**
 * Table types of bridge.db for runs and jobs: the runs index, the queue, the change feed,
 * followed workspaces, session offers, the flow run cache and the leader fence.
 */
import type { Generated } from 'kysely';
import type { Defaulted } from './schema-columns.ts';

/** Run status as indexed (mirrors the engine's RunStatus). */
export type RunIndexStatus =
  | 'active'
  | 'awaiting'
  | 'blocked'
  | 'completed'
  | 'failed'
  | 'cancelled';
/** State of one queued job. */
export type JobState = 'waiting' | 'active' | 'completed' | 'failed' | 'cancelled';

/** `runs`: index of runs (the ledger in the workspace is the source of truth). */
export interface RunsTable {
  id: string;
  workflow_id: string;
  workspace: string;
  layout: string;
  status: RunIndexStatus;
  started_by: string | null;
  origin_chat: string | null;
  created_at: number;
  updated_at: number;
  finished_at: number | null;
  /** 0009: when `phasebridge archive` packed the run's folder (NULL: the folder is in place). */
  archived_at: Defaulted<number | null>;
  /** 0010: the run's specification (first 500 characters), for the console's search. */
  spec: Defaulted<string | null>;
}

/** `jobs`: the embedded queue (owned by src/jobs/queue; no foreign key to runs on purpose). */
export interface JobsTable {
  id: string;
  run_id: string;
  step_id: string;
  attempt: number;
  state: JobState;
  payload_json: string;
  available_at: number;
  lease_owner: string | null;
  lease_expires_at: number | null;
  created_at: number;
  started_at: number | null;
  finished_at: number | null;
  exit_code: number | null;
  tokens_in: number | null;
  tokens_out: number | null;
  cost_usd: number | null;
  error: string | null;
  result_json: string | null;
  /** 0002: times a worker took the job (bounds retries after crashed workers). */
  lease_count: Defaulted<number>;
  /** 0002: a cancel requested for a running job, seen by its worker's heartbeat. */
  cancel_requested_at: number | null;
  /** 0002: 1 when the job failed because its workers kept dying. */
  lost: Defaulted<0 | 1>;
  /** 0002: strictly increasing number given when the job finishes (outcome polling). */
  outcome_seq: number | null;
  /** 0003: strictly increasing number given when the job is taken or reports progress. */
  signal_seq: number | null;
  /** 0003: the running job's latest progress report (JSON object). */
  progress_json: string | null;
}

/** `run_changes` (0004): one row per accepted commit from any process; a wake-up signal. */
export interface RunChangesTable {
  id: Generated<number>;
  run_id: string;
  /** The run's ledger seq after the commit. */
  seq: number;
  /** The committing process. */
  pid: number;
  at: number;
}

/** `run_feed` (0004): per run, the ledger seq the bridge's chats have been shown. */
export interface RunFeedTable {
  run_id: string;
  seq: number;
  updated_at: number;
}

/** `followed_workspaces` (0006): a codexclaw workspace followed read-only, and how far. */
export interface FollowedWorkspacesTable {
  workspace: string;
  /** Bytes of `.codexclaw/ledger.jsonl` already announced (always at a line end). */
  ledger_offset: number;
  created_at: number;
  updated_at: number;
}

/** `session_offers` (0021): a chat message offering an interrupted session (issue 14). */
export interface SessionOffersTable {
  id: Generated<number>;
  workspace: string;
  kind: 'coordinator' | 'flow';
  /** Coordinator session id or flow run id. */
  session: string;
  /** The session's state when offered (EXECUTING, blocked…): a later state is a new offer. */
  session_state: string;
  chat_ref: string;
  message_ref: string | null;
  button_token: string;
  status: Defaulted<'open' | 'decided' | 'stale'>;
  /** resume | restart | abort, once decided. */
  decision: string | null;
  decided_by: string | null;
  decided_at: number | null;
  created_at: number;
  updated_at: number;
  /** The phasebridge run behind the session, when phasebridge wrote it (0048). */
  run_id: string | null;
  /** The choosing press's idempotency key (`chat:<key>`), so a choice is applied once (0048). */
  decision_key: string | null;
  /** The chat the choice was made in (0048). */
  decided_in: string | null;
  /** What the choice did, in words; null while it is being applied (0048). */
  outcome: string | null;
  /** 1 once the copy's message shows its closing (0048; 0 from the choice to the edit). */
  decision_shown: Defaulted<number>;
  /** The copy whose send this message repeats (a kill in the send window), or null (0048). */
  repeat_of: number | null;
}

/** `leader_fence` (0045): the newest leader lease's fencing token (issue 33; Postgres only in use). */
export interface LeaderFenceTable {
  /** Always `bridge`: one leader per database. */
  name: string;
  token: number;
  /** The process that took it (host/pid/random), for messages. */
  holder: string;
  acquired_at: number;
}

/** `flow_run_cache` (0024): a flow run.yaml's stamp and status when last read (issue 14). */
export interface FlowRunCacheTable {
  workspace: string;
  /** Stamp of `.flow/runs` when listed ('' when too young to trust). */
  dir_stamp: string;
  /** JSON array of the run ids read on every lookup. */
  open_json: string;
  /** Finished runs: `{"<run id>": ["<size:mtime:ctime:ino>", "<status>"], …}`. */
  entries_json: string;
  updated_at: number;
}
