/** Table types of bridge.db for agents: definitions, full-access workspaces, tool approvals. */
import type { Generated } from 'kysely';
import type { Defaulted } from './schema-columns.ts';

/** Engines an agent can run on. */
export type AgentEngine = 'command' | 'claude' | 'codex';
/** How an agent gets its prompt. */
export type PromptVia = 'stdin' | 'file';

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
