/**
 * What the console's Access and Audit pages read and change, typed structurally so this folder
 * imports no repository: the bridge implements it over bridge.db with the CLI's own access code
 * (src/chatops/access-edits.ts), so the console applies the same rules and audit entries.
 */

/** A bound chat. */
export interface BindingView {
  readonly id: number;
  /** The chat ref as the CLI takes it (`telegram:-1001234`, with `:<thread>` for a thread). */
  readonly chat: string;
  readonly workspace: string;
  readonly defaultWorkflow: string | null;
  readonly defaultAgent: string | null;
}

/** One role: globally, or in one bound chat. */
export interface RoleView {
  /** The chat ref, or null for a global role. */
  readonly chat: string | null;
  readonly user: string;
  readonly role: string;
}

/** Bindings and roles. */
export interface AccessView {
  readonly bindings: readonly BindingView[];
  readonly roles: readonly RoleView[];
}

/** One change the Access page can make (the CLI's `allow`, `deny`, `bind`, `unbind`). */
export type AccessEdit =
  | { readonly op: 'allow'; readonly user: string; readonly role: string; readonly chat?: string }
  | { readonly op: 'deny'; readonly user: string; readonly chat?: string }
  | {
      readonly op: 'bind';
      readonly chat: string;
      readonly workspace: string;
      readonly workflow?: string;
    }
  | { readonly op: 'unbind'; readonly chat: string };

/** The Audit page's filters. */
export interface AuditQuery {
  readonly actor?: string;
  readonly action?: string;
  readonly outcome?: string;
  readonly chat?: string;
  /** Epoch ms, inclusive. */
  readonly since?: number;
  /** Epoch ms, exclusive. */
  readonly until?: number;
  readonly limit: number;
}

/** One audit entry. */
export interface AuditRow {
  readonly id: number;
  readonly at: number;
  readonly actor: string;
  /** The actor as people know them (see personName); `actor` stays the id. */
  readonly actorName?: string;
  readonly action: string;
  readonly target: string | null;
  readonly chatRef: string | null;
  readonly outcome: string;
  readonly detail: string | null;
}

/** The admin pages' source. */
export interface AdminSource {
  /** The roles a user can be given, lowest first. */
  readonly roles: readonly string[];
  access(): Promise<AccessView>;
  /** Applies an edit as `actor`; returns the sentence to show. INVALID_INPUT/NOT_FOUND refuse it. */
  edit(actor: string, edit: AccessEdit): Promise<string>;
  audit(q: AuditQuery): Promise<readonly AuditRow[]>;
  /**
   * True when a person signed in through chat is an admin in the chat they signed in through
   * (or globally when `chatRef` is null); only admins see and change these pages.
   */
  isAdmin(person: PersonRef): Promise<boolean>;
  /**
   * The workspace whose runs a person signed in through chat may see on the runs pages: their
   * chat's (none, '', once it is unbound); null from a private chat (a global role: every run).
   */
  workspaceOf(person: PersonRef): Promise<string | null>;
}

/** A person signed in through chat, and the chat they signed in through (null: a private chat). */
export interface PersonRef {
  readonly platform: string;
  readonly id: string;
  readonly chatRef: string | null;
  readonly threadRef?: string;
}
