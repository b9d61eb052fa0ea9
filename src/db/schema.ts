/**
 * Kysely table types for bridge.db, column for column as `migrations/` creates them (snake_case,
 * times INTEGER ms since the epoch, JSON as TEXT). Repositories map rows to camelCase objects.
 * The tables are declared by subject in schema-access.ts, schema-agents.ts, schema-runs.ts and
 * schema-messages.ts; this module gathers them into the Database type.
 */
import type { Insertable, Selectable } from 'kysely';
import type {
  AllowlistTable,
  AuditTable,
  BindingsTable,
  ChannelsTable,
  ConsoleLoginTokensTable,
  ConsoleSessionsTable,
  LinkCodesTable,
  PairingCodesTable,
  PeopleTable,
  PersonLinksTable,
  PersonsTable,
} from './schema-access.ts';
import type {
  AgentsTable,
  FullAccessWorkspacesTable,
  ToolApprovalsTable,
} from './schema-agents.ts';
import type {
  ChannelStateTable,
  CheckpointMessagesTable,
  OutboxTable,
  ReasonPromptsTable,
  RunMessagesTable,
  StatusMessagesTable,
  UnreachableChatsTable,
} from './schema-messages.ts';
import type {
  FlowRunCacheTable,
  FollowedWorkspacesTable,
  JobsTable,
  LeaderFenceTable,
  RunChangesTable,
  RunFeedTable,
  RunsTable,
  SessionOffersTable,
} from './schema-runs.ts';

export type * from './schema-access.ts';
export type * from './schema-agents.ts';
export type * from './schema-messages.ts';
export type * from './schema-runs.ts';

/** Every table of bridge.db (the kysely_migration tables are kysely's own). */
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

/** A selected row of table `T`. */
export type Row<T extends keyof Database> = Selectable<Database[T]>;
/** An insertable row of table `T`. */
export type NewRow<T extends keyof Database> = Insertable<Database[T]>;
