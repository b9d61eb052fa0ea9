/** The audit log: every authorization decision and administrative act, newest first on read. */
import type { Kysely } from 'kysely';
import type { AuditOutcome, Database, Row } from '../schema.ts';
import type { Clock, RepoOptions } from './support.ts';

/** One audit entry. */
export interface AuditEntry {
  id: number;
  at: number;
  /** The actor's immutable id, e.g. 'telegram:42' or 'cli:alice'. */
  actor: string;
  action: string;
  target: string | null;
  chatRef: string | null;
  outcome: AuditOutcome;
  detail: string | null;
}

/** What `record` writes; `at` defaults to now. */
export interface NewAuditEntry {
  at?: number;
  actor: string;
  action: string;
  target?: string | null;
  chatRef?: string | null;
  outcome: AuditOutcome;
  detail?: string | null;
}

/** Filters for `listRecent`. */
export interface AuditFilter {
  /** At most this many entries (default 50). */
  limit?: number;
  actor?: string;
  action?: string;
  outcome?: AuditOutcome;
  /** Only entries at or after this time (ms). */
  since?: number;
  /** Only entries before this time (ms). */
  until?: number;
  chatRef?: string;
  /** Only entries about this target (a run id, a chat ref …). */
  target?: string;
}

/** Appends to and reads `audit`. */
export class AuditRepo {
  readonly #db: Kysely<Database>;
  readonly #now: Clock;

  constructor(db: Kysely<Database>, opts: RepoOptions = {}) {
    this.#db = db;
    this.#now = opts.now ?? Date.now;
  }

  /** Appends one entry. */
  async record(entry: NewAuditEntry): Promise<AuditEntry> {
    const row = await this.#db
      .insertInto('audit')
      .values({
        at: entry.at ?? this.#now(),
        actor: entry.actor,
        action: entry.action,
        target: entry.target ?? null,
        chat_ref: entry.chatRef ?? null,
        outcome: entry.outcome,
        detail: entry.detail ?? null,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return toEntry(row);
  }

  /** The most recent entries matching `filter`, newest first. */
  async listRecent(filter: AuditFilter = {}): Promise<AuditEntry[]> {
    let query = this.#db.selectFrom('audit').selectAll();
    if (filter.actor !== undefined) query = query.where('actor', '=', filter.actor);
    if (filter.action !== undefined) query = query.where('action', '=', filter.action);
    if (filter.outcome !== undefined) query = query.where('outcome', '=', filter.outcome);
    if (filter.since !== undefined) query = query.where('at', '>=', filter.since);
    if (filter.until !== undefined) query = query.where('at', '<', filter.until);
    if (filter.chatRef !== undefined) query = query.where('chat_ref', '=', filter.chatRef);
    if (filter.target !== undefined) query = query.where('target', '=', filter.target);
    const rows = await query
      .orderBy('at', 'desc')
      .orderBy('id', 'desc')
      .limit(filter.limit ?? 50)
      .execute();
    return rows.map(toEntry);
  }
}

function toEntry(row: Row<'audit'>): AuditEntry {
  return {
    id: row.id,
    at: row.at,
    actor: row.actor,
    action: row.action,
    target: row.target,
    chatRef: row.chat_ref,
    outcome: row.outcome,
    detail: row.detail,
  };
}
