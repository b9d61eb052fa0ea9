/**
 * Kysely table types for bridge.db, column for column as `migrations/` creates them (snake_case,
 * times INTEGER ms since the epoch, JSON as TEXT). Repositories map rows to camelCase objects.
 */
import type { ColumnType, Generated, GeneratedAlways, Insertable, Selectable } from 'kysely';

/** A column the database fills in when an insert omits it (a DEFAULT). */
type Defaulted<T> = ColumnType<T, T | undefined, T>;

/** Engines an agent can run on. */
export type AgentEngine = 'command' | 'claude' | 'codex';
/** How an agent gets its prompt. */
export type PromptVia = 'stdin' | 'file';
/** Roles in increasing order of power. */
export type Role = 'viewer' | 'operator' | 'approver' | 'admin';
/** Run status as indexed (mirrors the engine's RunStatus). */
export type RunIndexStatus =
  | 'active'
  | 'awaiting'
  | 'blocked'
  | 'completed'
  | 'failed'
  | 'cancelled';
/** State of one posted checkpoint message. */
export type CheckpointMessageState = 'open' | 'decided' | 'expired';
/** State of one queued job. */
export type JobState = 'waiting' | 'active' | 'completed' | 'failed' | 'cancelled';
/** Outcome recorded in the audit log. */
export type AuditOutcome = 'allowed' | 'refused' | 'failed';

/** `channels`: one configured chat platform connection. */
export interface ChannelsTable {
  id: string;
  platform: string;
  display_name: string | null;
  config_json: Defaulted<string>;
  created_at: number;
}

/** `agents`: named agent definitions. */
export interface AgentsTable {
  id: Generated<number>;
  name: string;
  engine: AgentEngine;
  argv_json: Defaulted<string>;
  model: string | null;
  env_json: Defaulted<string>;
  timeout_ms: number | null;
  /** How the prompt reaches the agent; NULL = the engine's default (stdin). */
  prompt_via: PromptVia | null;
  /** The agent's permission posture as JSON (`{posture, allow?, deny?}`); NULL = the default. */
  permissions_json: string | null;
  enabled: Defaulted<0 | 1>;
  created_at: number;
  updated_at: number;
}

/** `full_access_workspaces`: where an admin allowed `permissions: full` (issue 21). */
export interface FullAccessWorkspacesTable {
  workspace: string;
  allowed_by: string;
  created_at: number;
}

/** `tool_approvals`: a tool use Claude asked permission for (`permissions: ask`). */
export interface ToolApprovalsTable {
  id: string;
  run_id: string;
  step_id: string;
  attempt: number;
  tool: string;
  input_json: string;
  /** What people are shown: the command, the file and a diff summary. */
  summary: string;
  status: 'pending' | 'allowed' | 'denied';
  /** Of an allow: this request only, or every later request of the run matching `rule`. */
  scope: 'once' | 'run' | null;
  /** Of a run-wide allow: the tool, or `Bash:<command prefix>`. */
  rule: string | null;
  /** Of a deny: the reason returned to the agent (required; "expired" at expiry). */
  reason: string | null;
  decided_by: string | null;
  created_at: number;
  expires_at: number;
  decided_at: number | null;
}

/** `bindings`: a chat (or one thread of it; '' = chat-wide) bound to a workspace. */
export interface BindingsTable {
  id: Generated<number>;
  chat_ref: string;
  thread: Defaulted<string>;
  workspace: string;
  default_workflow: string | null;
  default_agent: string | null;
  notify_json: Defaulted<string>;
  created_at: number;
  updated_at: number;
}

/** `allowlist`: a role for one platform user, globally or in one binding. */
export interface AllowlistTable {
  id: Generated<number>;
  binding_id: number | null;
  /** Computed by SQLite: 'global' or 'binding:<id>' (UNIQUE with platform, user_id). */
  scope: GeneratedAlways<string>;
  platform: string;
  user_id: string;
  role: Role;
  created_at: number;
}

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

/** `checkpoint_messages`: every chat message showing a checkpoint, with its button token. */
export interface CheckpointMessagesTable {
  id: Generated<number>;
  run_id: string;
  checkpoint_id: string;
  chat_ref: string;
  message_ref: string | null;
  button_token: string;
  state: Defaulted<CheckpointMessageState>;
  created_at: number;
  updated_at: number;
  /** (0039) 1 once the copy's message shows its decision (its buttons are gone). */
  decision_shown: Defaulted<number>;
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

/** `audit`: who did what, and whether it was allowed. */
export interface AuditTable {
  id: Generated<number>;
  at: number;
  actor: string;
  action: string;
  target: string | null;
  chat_ref: string | null;
  outcome: AuditOutcome;
  detail: string | null;
}

/** `pairing_codes`: one-time pairing codes, stored as hashes only. */
export interface PairingCodesTable {
  code_hash: string;
  expires_at: number;
  used_at: number | null;
  created_at: number;
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

/** `status_messages` (0005): per run and chat, the status message edited as the run moves. */
export interface StatusMessagesTable {
  run_id: string;
  chat_ref: string;
  message_ref: string;
  created_at: number;
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

/** State of one outbox row: queued, handed to the platform, answered, or given up on. */
export type OutboxState = 'pending' | 'attempted' | 'confirmed' | 'failed';

/** `outbox` (0008): one outgoing send or edit, written before it is attempted. */
export interface OutboxTable {
  id: Generated<number>;
  platform: string;
  lane: string;
  kind: 'send' | 'edit';
  target: string;
  payload_json: string;
  /** (0040 adds `interactive`) */
  urgency: 'interactive' | 'decision' | 'notice' | 'status';
  state: OutboxState;
  attempts: Defaulted<number>;
  not_before: Defaulted<number>;
  result_ref: string | null;
  error_code: string | null;
  error: string | null;
  created_at: number;
  updated_at: number;
  /** (0039) The row that asked for the call, told the result when it is confirmed (JSON). */
  owner_json: string | null;
  /** (0039) What a send is about: a second one with the key to the same chat is not sent. */
  dedupe_key: string | null;
}

/** `reason_prompts` (0005): a reject or change request waiting for the reason its presser types. */
export interface ReasonPromptsTable {
  prompt_ref: string;
  platform: string;
  user_id: string;
  run_id: string;
  checkpoint_id: string;
  /** 0007: the answer the reason completes, 'reject' or 'loop' (Request changes). */
  answer: Defaulted<string>;
  asked_at: number;
  expires_at: number;
}

/** `console_login_tokens` (0005): one-time console login tokens, as SHA-256 digests only. */
export interface ConsoleLoginTokensTable {
  token_hash: string;
  expires_at: number;
  created_at: number;
  /** (0042) The chat person the token signs in, as JSON; NULL = the local admin. */
  person_json: string | null;
}

/** `console_sessions` (0005): logged-in console browsers, by the SHA-256 digest of the cookie. */
export interface ConsoleSessionsTable {
  cookie_hash: string;
  /** Public id (routing of private answers, logs); not a secret. */
  session_id: string;
  created_at: number;
  last_seen_at: number;
  /** (0042) The chat person signed in, as JSON; NULL = the local admin. */
  person_json: string | null;
  /** (0042) When a person's session ends (ms); NULL = only when idle. */
  expires_at: number | null;
}

/** `channel_state` (0005): a small key/value store per platform; NULL expires_at = kept. */
export interface ChannelStateTable {
  platform: string;
  key: string;
  value: string;
  expires_at: number | null;
  updated_at: number;
}

/** `unreachable_chats` (0012): a chat the platform refuses us in, until someone there acts. */
export interface UnreachableChatsTable {
  chat_ref: string;
  /** The adapter's short reason (`bot_kicked`, `not_in_channel`...). */
  reason: string;
  /** The refusal as the adapter described it (no tokens). */
  detail: string;
  since: number;
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
}

/** Every table of bridge.db (the kysely_migration tables are kysely's own). */
/** `run_messages` (0047): the bot's other messages about a run, so a reply to one is answered. */
export interface RunMessagesTable {
  message_ref: string;
  run_id: string;
  /** What the message is: 'answer', 'outcome', 'ack', 'prompt' or 'status' (RunMessageKind). */
  kind: string;
  created_at: number;
}

export interface Database {
  channels: ChannelsTable;
  agents: AgentsTable;
  full_access_workspaces: FullAccessWorkspacesTable;
  tool_approvals: ToolApprovalsTable;
  bindings: BindingsTable;
  allowlist: AllowlistTable;
  runs: RunsTable;
  checkpoint_messages: CheckpointMessagesTable;
  jobs: JobsTable;
  audit: AuditTable;
  pairing_codes: PairingCodesTable;
  run_changes: RunChangesTable;
  run_feed: RunFeedTable;
  status_messages: StatusMessagesTable;
  followed_workspaces: FollowedWorkspacesTable;
  reason_prompts: ReasonPromptsTable;
  console_login_tokens: ConsoleLoginTokensTable;
  console_sessions: ConsoleSessionsTable;
  channel_state: ChannelStateTable;
  outbox: OutboxTable;
  unreachable_chats: UnreachableChatsTable;
  session_offers: SessionOffersTable;
  flow_run_cache: FlowRunCacheTable;
  people: PeopleTable;
  persons: PersonsTable;
  person_links: PersonLinksTable;
  link_codes: LinkCodesTable;
  leader_fence: LeaderFenceTable;
  run_messages: RunMessagesTable;
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

/** `people` (0041): the name a person was last seen under, by actor id (issue 29). */
export interface PeopleTable {
  actor_id: string;
  name: string;
  updated_at: number;
}

/** `persons` (0044): one person across platforms, named by the identity that asked for the link. */
export interface PersonsTable {
  person_id: string;
  name: string;
  created_at: number;
}

/** `person_links` (0044): the person an identity (actor id) belongs to; at most one each. */
export interface PersonLinksTable {
  actor_id: string;
  person_id: string;
  linked_at: number;
}

/**
 * `link_codes` (0044): a `/link` code (sha256 of it), its issuer and, once sent from another
 * identity, its claimant; `used_at` is set when the issuer confirms (or the code is spent).
 */
export interface LinkCodesTable {
  code_hash: string;
  issuer_id: string;
  issuer_name: string | null;
  issuer_chat: string | null;
  expires_at: number;
  claimant_id: string | null;
  claimant_name: string | null;
  claimant_chat: string | null;
  used_at: number | null;
  created_at: number;
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

/** A selected row of table `T`. */
export type Row<T extends keyof Database> = Selectable<Database[T]>;
/** An insertable row of table `T`. */
export type NewRow<T extends keyof Database> = Insertable<Database[T]>;
