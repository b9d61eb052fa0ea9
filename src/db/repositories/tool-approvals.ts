/**
 * Tool approvals (`permissions: ask`): the approval MCP server in the agent's process tree asks
 * here, people decide through the bridge, and each request is decided exactly once (a decision
 * and the expiry race on `status = 'pending'`; the first wins). Unanswered means denied.
 */
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database, Row } from '../schema.ts';
import { type Clock, parseJsonColumn, type RepoOptions } from './support.ts';

/** One request and, once decided, its decision. */
export interface ToolApprovalRecord {
  id: string;
  runId: string;
  stepId: string;
  attempt: number;
  tool: string;
  input: Record<string, unknown>;
  summary: string;
  status: 'pending' | 'allowed' | 'denied';
  scope: 'once' | 'run' | null;
  rule: string | null;
  reason: string | null;
  decidedBy: string | null;
  createdAt: number;
  expiresAt: number;
  decidedAt: number | null;
}

/** What `ask` records. */
export interface NewToolApproval {
  runId: string;
  stepId: string;
  attempt: number;
  tool: string;
  input: Record<string, unknown>;
  summary: string;
  expiresAt: number;
}

/** A decision by a person. */
export type ToolApprovalAnswer =
  | { allow: true; scope: 'once' }
  | { allow: true; scope: 'run'; rule: string }
  | { allow: false; reason: string };

/** The reason an expired request was denied with. */
export const EXPIRED_REASON = 'expired: nobody answered in time, so it was denied';

/** Reads and writes `tool_approvals`. */
export class ToolApprovalsRepo {
  readonly #db: Kysely<Database>;
  readonly #now: Clock;

  constructor(db: Kysely<Database>, opts: RepoOptions = {}) {
    this.#db = db;
    this.#now = opts.now ?? Date.now;
  }

  /** Records a pending request; returns it. */
  async ask(req: NewToolApproval): Promise<ToolApprovalRecord> {
    const row = await this.#db
      .insertInto('tool_approvals')
      .values({
        id: randomUUID(),
        run_id: req.runId,
        step_id: req.stepId,
        attempt: req.attempt,
        tool: req.tool,
        input_json: JSON.stringify(req.input),
        summary: req.summary,
        status: 'pending',
        created_at: this.#now(),
        expires_at: req.expiresAt,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return toRecord(row);
  }

  /** The request `id`, or null. */
  async get(id: string): Promise<ToolApprovalRecord | null> {
    const row = await this.#db
      .selectFrom('tool_approvals')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirst();
    return row ? toRecord(row) : null;
  }

  /** The rules "Allow for this run" created in `runId`. */
  async runRules(runId: string): Promise<string[]> {
    const rows = await this.#db
      .selectFrom('tool_approvals')
      .select('rule')
      .where('run_id', '=', runId)
      .where('status', '=', 'allowed')
      .where('scope', '=', 'run')
      .execute();
    return rows.map((r) => r.rule).filter((r): r is string => r !== null);
  }

  /** Every pending request, oldest first (what the bridge must show). */
  async pending(): Promise<ToolApprovalRecord[]> {
    const rows = await this.#db
      .selectFrom('tool_approvals')
      .selectAll()
      .where('status', '=', 'pending')
      .orderBy('created_at')
      .execute();
    return rows.map(toRecord);
  }

  /** Decides a pending request; false when it was decided (or expired) already. */
  async decide(id: string, answer: ToolApprovalAnswer, by: string): Promise<boolean> {
    const set = answer.allow
      ? {
          status: 'allowed' as const,
          scope: answer.scope,
          rule: answer.scope === 'run' ? answer.rule : null,
        }
      : { status: 'denied' as const, reason: answer.reason };
    const res = await this.#db
      .updateTable('tool_approvals')
      .set({ ...set, decided_by: by, decided_at: this.#now() })
      .where('id', '=', id)
      .where('status', '=', 'pending')
      .executeTakeFirst();
    return res.numUpdatedRows > 0n;
  }

  /** Denies the request if it is still pending at or after its expiry; true when it did. */
  async expire(id: string): Promise<boolean> {
    const now = this.#now();
    const res = await this.#db
      .updateTable('tool_approvals')
      .set({ status: 'denied', reason: EXPIRED_REASON, decided_by: 'system', decided_at: now })
      .where('id', '=', id)
      .where('status', '=', 'pending')
      .where('expires_at', '<=', now)
      .executeTakeFirst();
    return res.numUpdatedRows > 0n;
  }
}

function toRecord(row: Row<'tool_approvals'>): ToolApprovalRecord {
  return {
    id: row.id,
    runId: row.run_id,
    stepId: row.step_id,
    attempt: row.attempt,
    tool: row.tool,
    input: parseJsonColumn<Record<string, unknown>>(row.input_json, `input_json of ${row.id}`),
    summary: row.summary,
    status: row.status,
    scope: row.scope,
    rule: row.rule,
    reason: row.reason,
    decidedBy: row.decided_by,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    decidedAt: row.decided_at,
  };
}
