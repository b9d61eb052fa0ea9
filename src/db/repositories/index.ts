/** All repositories over one bridge.db, built together so they share a clock. */
import type { BridgeDb } from '../connection.ts';
import { AgentsRepo } from './agents.ts';
import { AllowlistRepo } from './allowlist.ts';
import { AuditRepo } from './audit.ts';
import { BindingsRepo } from './bindings.ts';
import { ChannelsRepo } from './channels.ts';
import { CheckpointMessagesRepo } from './checkpoint-messages.ts';
import { PairingRepo } from './pairing.ts';
import { RunsRepo } from './runs.ts';
import type { RepoOptions } from './support.ts';

export { type AgentRecord, AgentsRepo, type NewAgent } from './agents.ts';
export {
  type AllowEntry,
  AllowlistRepo,
  type AllowScope,
  ROLES,
  strongerRole,
} from './allowlist.ts';
export { type AuditEntry, type AuditFilter, AuditRepo, type NewAuditEntry } from './audit.ts';
export { type BindInput, type BindingRecord, BindingsRepo } from './bindings.ts';
export { type ChannelInput, type ChannelRecord, ChannelsRepo } from './channels.ts';
export {
  type CheckpointMessageRecord,
  CheckpointMessagesRepo,
  type NewCheckpointMessage,
  newButtonToken,
} from './checkpoint-messages.ts';
export { type ConsumeResult, hashPairingCode, PairingRepo } from './pairing.ts';
export {
  type RunIndexInput,
  type RunIndexRecord,
  type RunListFilter,
  RunsRepo,
  TERMINAL_RUN_STATUSES,
} from './runs.ts';
export type { Clock, RepoOptions } from './support.ts';

/** One instance of every repository. */
export interface Repositories {
  agents: AgentsRepo;
  allowlist: AllowlistRepo;
  audit: AuditRepo;
  bindings: BindingsRepo;
  channels: ChannelsRepo;
  checkpointMessages: CheckpointMessagesRepo;
  pairing: PairingRepo;
  runs: RunsRepo;
}

/** Builds every repository over `db` (jobs are the queue driver's, not here). */
export function createRepositories(db: BridgeDb, opts: RepoOptions = {}): Repositories {
  const k = db.kysely;
  return {
    agents: new AgentsRepo(k, opts),
    allowlist: new AllowlistRepo(k, opts),
    audit: new AuditRepo(k, opts),
    bindings: new BindingsRepo(k, opts),
    channels: new ChannelsRepo(k, opts),
    checkpointMessages: new CheckpointMessagesRepo(k, opts),
    pairing: new PairingRepo(k, opts),
    runs: new RunsRepo(k, opts),
  };
}
