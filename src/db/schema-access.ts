/**
 * Table types of bridge.db for people and access: platform connections, bindings, roles,
 * pairing codes, console logins, the audit log, people's names and linked persons.
 */
import type { Generated, GeneratedAlways } from 'kysely';
import type { Defaulted } from './schema-columns.ts';

/** Roles in increasing order of power. */
export type Role = 'viewer' | 'operator' | 'approver' | 'admin';
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
