/** Chat bindings: which chat (or thread of it) is served, and in which workspace. */
import type { Kysely } from 'kysely';
import type { Database, Row } from '../schema.ts';
import { withConstraintErrors } from '../sqlite-errors.ts';
import { type Clock, parseJsonColumn, quoted, type RepoOptions } from './support.ts';

/** One binding; `thread` null means the whole chat. */
export interface BindingRecord {
  id: number;
  chatRef: string;
  thread: string | null;
  workspace: string;
  defaultWorkflow: string | null;
  defaultAgent: string | null;
  notify: Record<string, unknown>;
  createdAt: number;
  updatedAt: number;
}

/**
 * What `bind` sets. On a re-bind, an omitted optional field keeps its value and null clears it;
 * the binding keeps its id, so its allowlist entries survive.
 */
export interface BindInput {
  chatRef: string;
  thread?: string | null;
  workspace: string;
  defaultWorkflow?: string | null;
  defaultAgent?: string | null;
  notify?: Record<string, unknown>;
}

/** The stored form of "no thread": NULLs would all be distinct in the UNIQUE(chat_ref, thread). */
const CHAT_WIDE = '';

/** Reads and writes `bindings`. */
export class BindingsRepo {
  readonly #db: Kysely<Database>;
  readonly #now: Clock;

  constructor(db: Kysely<Database>, opts: RepoOptions = {}) {
    this.#db = db;
    this.#now = opts.now ?? Date.now;
  }

  /** Binds the chat (or thread) to a workspace, or updates its existing binding. */
  async bind(input: BindInput): Promise<BindingRecord> {
    const now = this.#now();
    const thread = input.thread ?? CHAT_WIDE;
    const row = await withConstraintErrors(`a binding of ${describe(input.chatRef, thread)}`, () =>
      this.#db
        .insertInto('bindings')
        .values({
          chat_ref: input.chatRef,
          thread,
          workspace: input.workspace,
          default_workflow: input.defaultWorkflow ?? null,
          default_agent: input.defaultAgent ?? null,
          notify_json: JSON.stringify(input.notify ?? {}),
          created_at: now,
          updated_at: now,
        })
        .onConflict((oc) =>
          oc.columns(['chat_ref', 'thread']).doUpdateSet((eb) => ({
            workspace: eb.ref('excluded.workspace'),
            updated_at: eb.ref('excluded.updated_at'),
            ...(input.defaultWorkflow !== undefined && {
              default_workflow: eb.ref('excluded.default_workflow'),
            }),
            ...(input.defaultAgent !== undefined && {
              default_agent: eb.ref('excluded.default_agent'),
            }),
            ...(input.notify !== undefined && { notify_json: eb.ref('excluded.notify_json') }),
          })),
        )
        .returningAll()
        .executeTakeFirstOrThrow(),
    );
    return toRecord(row);
  }

  /** The binding for a thread, falling back to the chat-wide binding; null when neither exists. */
  async find(chatRef: string, thread?: string | null): Promise<BindingRecord | null> {
    const threads = thread ? [thread, CHAT_WIDE] : [CHAT_WIDE];
    const row = await this.#db
      .selectFrom('bindings')
      .selectAll()
      .where('chat_ref', '=', chatRef)
      .where('thread', 'in', threads)
      // '' sorts first: descending puts the thread's own binding before the chat-wide one.
      .orderBy('thread', 'desc')
      .limit(1)
      .executeTakeFirst();
    return row ? toRecord(row) : null;
  }

  /** The binding with this id, or null. */
  async get(id: number): Promise<BindingRecord | null> {
    const row = await this.#db
      .selectFrom('bindings')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirst();
    return row ? toRecord(row) : null;
  }

  /** Every binding, by chat then thread. */
  async list(): Promise<BindingRecord[]> {
    const rows = await this.#db
      .selectFrom('bindings')
      .selectAll()
      .orderBy('chat_ref')
      .orderBy('thread')
      .execute();
    return rows.map(toRecord);
  }

  /** Removes exactly this binding (no fallback) and its allowlist entries; false when none. */
  async remove(chatRef: string, thread?: string | null): Promise<boolean> {
    const res = await this.#db
      .deleteFrom('bindings')
      .where('chat_ref', '=', chatRef)
      .where('thread', '=', thread ?? CHAT_WIDE)
      .executeTakeFirst();
    return res.numDeletedRows > 0n;
  }

  /**
   * The chat got a new id on its platform (a Telegram group upgraded to a supergroup): its
   * bindings follow it, keeping their ids and so their roles. Returns how many moved.
   */
  async moveChat(from: string, to: string): Promise<number> {
    const res = await withConstraintErrors(`a binding of ${quoted(to)}`, () =>
      this.#db
        .updateTable('bindings')
        .set({ chat_ref: to, updated_at: this.#now() })
        .where('chat_ref', '=', from)
        .executeTakeFirst(),
    );
    return Number(res.numUpdatedRows);
  }
}

function describe(chatRef: string, thread: string): string {
  return thread === CHAT_WIDE ? quoted(chatRef) : `${quoted(chatRef)} thread ${quoted(thread)}`;
}

function toRecord(row: Row<'bindings'>): BindingRecord {
  return {
    id: row.id,
    chatRef: row.chat_ref,
    thread: row.thread === CHAT_WIDE ? null : row.thread,
    workspace: row.workspace,
    defaultWorkflow: row.default_workflow,
    defaultAgent: row.default_agent,
    notify: parseJsonColumn(row.notify_json, `notify_json of binding ${row.id}`),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
