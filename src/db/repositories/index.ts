/** All repositories over one bridge.db, built together so they share a clock. */
import type { Kysely } from 'kysely';
import type { Database } from '../schema.ts';
import { AgentsRepo, FullAccessRepo } from './agents.ts';
import { AllowlistRepo } from './allowlist.ts';
import { AuditRepo } from './audit.ts';
import { BindingsRepo } from './bindings.ts';
import { ChannelStateRepo } from './channel-state.ts';
import { ChannelsRepo } from './channels.ts';
import { CheckpointMessagesRepo } from './checkpoint-messages.ts';
import { ConsoleAuthRepo } from './console-auth.ts';
import { FlowRunCacheRepo } from './flow-run-cache.ts';
import { FollowedWorkspacesRepo } from './followed-workspaces.ts';
import { PairingRepo } from './pairing.ts';
import { PeopleRepo } from './people.ts';
import { PersonLinksRepo } from './person-links.ts';
import { ReasonPromptsRepo } from './reason-prompts.ts';
import { RunMessagesRepo } from './run-messages.ts';
import { RunsRepo } from './runs.ts';
import { SessionOffersRepo } from './session-offers.ts';
import { StatusMessagesRepo } from './status-messages.ts';
import type { RepoOptions } from './support.ts';
import { ToolApprovalsRepo } from './tool-approvals.ts';
import { UnreachableChatsRepo } from './unreachable-chats.ts';

export { type AgentRecord, AgentsRepo, FullAccessRepo, type NewAgent } from './agents.ts';
export {
  type AllowEntry,
  AllowlistRepo,
  type AllowScope,
  ROLES,
  strongerRole,
} from './allowlist.ts';
export { type AuditEntry, type AuditFilter, AuditRepo, type NewAuditEntry } from './audit.ts';
export { type BindInput, type BindingRecord, BindingsRepo } from './bindings.ts';
export {
  type ChannelStateEntry,
  ChannelStateRepo,
  type ChannelStateScope,
} from './channel-state.ts';
export { type ChannelInput, type ChannelRecord, ChannelsRepo } from './channels.ts';
export {
  type CheckpointMessageRecord,
  CheckpointMessagesRepo,
  type NewCheckpointMessage,
  newButtonToken,
} from './checkpoint-messages.ts';
export { ConsoleAuthRepo, type ConsoleSessionRecord } from './console-auth.ts';
export { FlowRunCacheRepo } from './flow-run-cache.ts';
export { type FollowedWorkspace, FollowedWorkspacesRepo } from './followed-workspaces.ts';
export { type ConsumeResult, hashPairingCode, PairingRepo } from './pairing.ts';
export { PeopleRepo } from './people.ts';
export {
  type LinkCodeProblem,
  type LinkCodeRecord,
  type LinkedPerson,
  type LinkParty,
  PersonLinksRepo,
} from './person-links.ts';
export { type ReasonPromptRecord, ReasonPromptsRepo } from './reason-prompts.ts';
export {
  RUN_MESSAGES_KEEP_MS,
  type RunMessageKind,
  type RunMessageRecord,
  RunMessagesRepo,
} from './run-messages.ts';
export { type RunIndexInput, type RunListFilter, RunsRepo } from './runs.ts';
export { type RunIndexRecord, TERMINAL_RUN_STATUSES } from './runs-record.ts';
export {
  type SessionKey,
  type SessionOfferRecord,
  SessionOffersRepo,
} from './session-offers.ts';
export { StatusMessagesRepo } from './status-messages.ts';
export type { Clock, RepoOptions } from './support.ts';
export {
  EXPIRED_REASON,
  type NewToolApproval,
  type ToolApprovalAnswer,
  type ToolApprovalRecord,
  ToolApprovalsRepo,
} from './tool-approvals.ts';
export { type UnreachableChat, UnreachableChatsRepo } from './unreachable-chats.ts';

/** One instance of every repository. */
export interface Repositories {
  agents: AgentsRepo;
  allowlist: AllowlistRepo;
  audit: AuditRepo;
  bindings: BindingsRepo;
  channels: ChannelsRepo;
  channelState: ChannelStateRepo;
  checkpointMessages: CheckpointMessagesRepo;
  consoleAuth: ConsoleAuthRepo;
  followed: FollowedWorkspacesRepo;
  /** Workspaces where `permissions: full` is allowed. */
  fullAccess: FullAccessRepo;
  pairing: PairingRepo;
  /** The names people were last seen under (decisions stored by id name them). */
  people: PeopleRepo;
  /** Identities linked as one person across platforms, and the codes that link them. */
  personLinks: PersonLinksRepo;
  reasonPrompts: ReasonPromptsRepo;
  runs: RunsRepo;
  /** The bot's other messages about a run (a reply to one is answered, issue 29). */
  runMessages: RunMessagesRepo;
  statusMessages: StatusMessagesRepo;
  /** Tool approvals of `permissions: ask`. */
  toolApprovals: ToolApprovalsRepo;
  unreachable: UnreachableChatsRepo;
  /** Chat offers of interrupted sessions (Resume / Restart / Abort). */
  sessionOffers: SessionOffersRepo;
  /** Statuses of flow runs' run.yaml when last read (interrupted-session lookups). */
  flowRunCache: FlowRunCacheRepo;
}

/** Builds every repository over `db` (jobs are the queue driver's, not here). */
export function createRepositories(
  db: { readonly kysely: Kysely<Database> },
  opts: RepoOptions = {},
): Repositories {
  const k = db.kysely;
  return {
    agents: new AgentsRepo(k, opts),
    allowlist: new AllowlistRepo(k, opts),
    audit: new AuditRepo(k, opts),
    bindings: new BindingsRepo(k, opts),
    channels: new ChannelsRepo(k, opts),
    channelState: new ChannelStateRepo(k, opts),
    checkpointMessages: new CheckpointMessagesRepo(k, opts),
    consoleAuth: new ConsoleAuthRepo(k, opts),
    followed: new FollowedWorkspacesRepo(k, opts),
    fullAccess: new FullAccessRepo(k, opts),
    pairing: new PairingRepo(k, opts),
    people: new PeopleRepo(k, opts),
    personLinks: new PersonLinksRepo(k, opts),
    reasonPrompts: new ReasonPromptsRepo(k, opts),
    runs: new RunsRepo(k, opts),
    runMessages: new RunMessagesRepo(k, opts),
    statusMessages: new StatusMessagesRepo(k, opts),
    toolApprovals: new ToolApprovalsRepo(k, opts),
    unreachable: new UnreachableChatsRepo(k, opts),
    sessionOffers: new SessionOffersRepo(k, opts),
    flowRunCache: new FlowRunCacheRepo(k, opts),
  };
}
