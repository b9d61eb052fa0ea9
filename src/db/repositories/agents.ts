/** Named agent definitions (`phasebridge agents ...`). */
import type { Kysely } from 'kysely';
import type { AgentPermissions } from '../../engine/workflow/types.ts';
import { NotFoundError } from '../../errors.ts';
import type { AgentEngine, Database, PromptVia, Row } from '../schema.ts';
import { withConstraintErrors } from '../sqlite-errors.ts';
import { type Clock, parseJsonColumn, quoted, type RepoOptions } from './support.ts';

/** One stored agent. */
export interface AgentRecord {
  id: number;
  name: string;
  engine: AgentEngine;
  argv: string[];
  model: string | null;
  env: Record<string, string>;
  timeoutMs: number | null;
  promptVia: PromptVia | null;
  /** The agent's permission posture; null = the step's or the default. */
  permissions: AgentPermissions | null;
  enabled: boolean;
  createdAt: number;
  updatedAt: number;
}

/** What `add` needs; omitted fields take their defaults (empty argv/env, enabled). */
export interface NewAgent {
  name: string;
  engine: AgentEngine;
  argv?: string[];
  model?: string | null;
  env?: Record<string, string>;
  timeoutMs?: number | null;
  promptVia?: PromptVia | null;
  permissions?: AgentPermissions | null;
  enabled?: boolean;
}

/** CRUD over `agents`, keyed by the unique name. */
export class AgentsRepo {
  readonly #db: Kysely<Database>;
  readonly #now: Clock;

  constructor(db: Kysely<Database>, opts: RepoOptions = {}) {
    this.#db = db;
    this.#now = opts.now ?? Date.now;
  }

  /** Adds an agent; ConflictError when the name is taken. */
  async add(agent: NewAgent): Promise<AgentRecord> {
    const now = this.#now();
    const row = await withConstraintErrors(`an agent named ${quoted(agent.name)}`, () =>
      this.#db
        .insertInto('agents')
        .values({
          name: agent.name,
          engine: agent.engine,
          argv_json: JSON.stringify(agent.argv ?? []),
          model: agent.model ?? null,
          env_json: JSON.stringify(agent.env ?? {}),
          timeout_ms: agent.timeoutMs ?? null,
          prompt_via: agent.promptVia ?? null,
          permissions_json: agent.permissions ? JSON.stringify(agent.permissions) : null,
          enabled: agent.enabled === false ? 0 : 1,
          created_at: now,
          updated_at: now,
        })
        .returningAll()
        .executeTakeFirstOrThrow(),
    );
    return toRecord(row);
  }

  /** Removes the agent; false when there was none by that name. */
  async remove(name: string): Promise<boolean> {
    const res = await this.#db.deleteFrom('agents').where('name', '=', name).executeTakeFirst();
    return res.numDeletedRows > 0n;
  }

  /** The agent named `name`, or null. */
  async get(name: string): Promise<AgentRecord | null> {
    const row = await this.#db
      .selectFrom('agents')
      .selectAll()
      .where('name', '=', name)
      .executeTakeFirst();
    return row ? toRecord(row) : null;
  }

  /** Every agent, by name. */
  async list(): Promise<AgentRecord[]> {
    const rows = await this.#db.selectFrom('agents').selectAll().orderBy('name').execute();
    return rows.map(toRecord);
  }

  /** Enables or disables an agent; NotFoundError when there is none by that name. */
  async setEnabled(name: string, enabled: boolean): Promise<AgentRecord> {
    const row = await this.#db
      .updateTable('agents')
      .set({ enabled: enabled ? 1 : 0, updated_at: this.#now() })
      .where('name', '=', name)
      .returningAll()
      .executeTakeFirst();
    if (!row) throw new NotFoundError(`no agent named ${quoted(name)}`);
    return toRecord(row);
  }
}

/** Workspaces whose admin allowed `permissions: full` (deny by default). */
export class FullAccessRepo {
  readonly #db: Kysely<Database>;
  readonly #now: Clock;

  constructor(db: Kysely<Database>, opts: RepoOptions = {}) {
    this.#db = db;
    this.#now = opts.now ?? Date.now;
  }

  /** Allows full-access steps in `workspace` (again: keeps the first grant). */
  async allow(workspace: string, by: string): Promise<void> {
    await this.#db
      .insertInto('full_access_workspaces')
      .values({ workspace, allowed_by: by, created_at: this.#now() })
      .onConflict((oc) => oc.column('workspace').doNothing())
      .execute();
  }

  /** Withdraws the allowance; false when there was none. */
  async revoke(workspace: string): Promise<boolean> {
    const res = await this.#db
      .deleteFrom('full_access_workspaces')
      .where('workspace', '=', workspace)
      .executeTakeFirst();
    return res.numDeletedRows > 0n;
  }

  /** True when an admin allowed full access in `workspace`. */
  async allowed(workspace: string): Promise<boolean> {
    const row = await this.#db
      .selectFrom('full_access_workspaces')
      .select('workspace')
      .where('workspace', '=', workspace)
      .executeTakeFirst();
    return row !== undefined;
  }

  /** Every allowed workspace with who allowed it. */
  async list(): Promise<{ workspace: string; allowedBy: string; createdAt: number }[]> {
    const rows = await this.#db
      .selectFrom('full_access_workspaces')
      .selectAll()
      .orderBy('workspace')
      .execute();
    return rows.map((r) => ({
      workspace: r.workspace,
      allowedBy: r.allowed_by,
      createdAt: r.created_at,
    }));
  }
}

function toRecord(row: Row<'agents'>): AgentRecord {
  const where = `agent ${quoted(row.name)}`;
  return {
    id: row.id,
    name: row.name,
    engine: row.engine,
    argv: parseJsonColumn<string[]>(row.argv_json, `argv_json of ${where}`),
    model: row.model,
    env: parseJsonColumn<Record<string, string>>(row.env_json, `env_json of ${where}`),
    timeoutMs: row.timeout_ms,
    promptVia: row.prompt_via,
    permissions:
      (row.permissions_json ?? null) === null
        ? null
        : parseJsonColumn<AgentPermissions>(row.permissions_json!, `permissions_json of ${where}`),
    enabled: row.enabled === 1,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
