/** The index of runs, for listing and lookup; each run's ledger stays the source of truth. */
import type { Kysely } from 'kysely';
import { NotFoundError } from '../../errors.ts';
import type { Database, RunIndexStatus } from '../schema.ts';
import { withConstraintErrors } from '../sqlite-errors.ts';
import {
  type RunIndexRecord,
  SPEC_INDEX_CHARS,
  TERMINAL_RUN_STATUSES,
  toRunIndexRecord,
} from './runs-record.ts';
import {
  type RunFacets,
  type RunPage,
  type RunSearch,
  runFacets,
  searchRuns,
} from './runs-search.ts';
import { type Clock, quoted, type RepoOptions } from './support.ts';

/** What `upsert` writes; times default to now (createdAt is kept on update). */
export interface RunIndexInput {
  id: string;
  workflowId: string;
  workspace: string;
  layout: string;
  status: RunIndexStatus;
  startedBy?: string | null;
  originChat?: string | null;
  createdAt?: number;
  updatedAt?: number;
  spec?: string;
}

/** Filters for `list`; results are newest-updated first. */
export interface RunListFilter {
  status?: RunIndexStatus | readonly RunIndexStatus[];
  workspace?: string;
  originChat?: string;
  limit?: number;
}

/** Reads and writes `runs`. */
export class RunsRepo {
  readonly #db: Kysely<Database>;
  readonly #now: Clock;

  constructor(db: Kysely<Database>, opts: RepoOptions = {}) {
    this.#db = db;
    this.#now = opts.now ?? Date.now;
  }

  /** Inserts or refreshes the index row of a run (its original createdAt is kept). */
  async upsert(run: RunIndexInput): Promise<RunIndexRecord> {
    const updatedAt = run.updatedAt ?? this.#now();
    const finishedAt = TERMINAL_RUN_STATUSES.includes(run.status) ? updatedAt : null;
    const row = await withConstraintErrors(`run ${quoted(run.id)}`, () =>
      this.#db
        .insertInto('runs')
        .values({
          id: run.id,
          workflow_id: run.workflowId,
          workspace: run.workspace,
          layout: run.layout,
          status: run.status,
          started_by: run.startedBy ?? null,
          origin_chat: run.originChat ?? null,
          created_at: run.createdAt ?? updatedAt,
          updated_at: updatedAt,
          finished_at: finishedAt,
          spec: run.spec === undefined ? null : run.spec.slice(0, SPEC_INDEX_CHARS),
        })
        .onConflict((oc) =>
          oc.column('id').doUpdateSet((eb) => ({
            workflow_id: eb.ref('excluded.workflow_id'),
            workspace: eb.ref('excluded.workspace'),
            layout: eb.ref('excluded.layout'),
            status: eb.ref('excluded.status'),
            started_by: eb.ref('excluded.started_by'),
            origin_chat: eb.ref('excluded.origin_chat'),
            updated_at: eb.ref('excluded.updated_at'),
            spec: eb.fn.coalesce('excluded.spec', 'runs.spec'),
            // Keep the first finish time when an ended run is re-indexed.
            finished_at:
              finishedAt === null
                ? null
                : eb.fn.coalesce('runs.finished_at', 'excluded.finished_at'),
          })),
        )
        .returningAll()
        .executeTakeFirstOrThrow(),
    );
    return toRunIndexRecord(row);
  }

  /** The run with this id, or null. */
  async get(id: string): Promise<RunIndexRecord | null> {
    const row = await this.#db
      .selectFrom('runs')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirst();
    return row ? toRunIndexRecord(row) : null;
  }

  /** Runs matching `filter`, most recently updated first. */
  async list(filter: RunListFilter = {}): Promise<RunIndexRecord[]> {
    let query = this.#db.selectFrom('runs').selectAll();
    if (filter.status !== undefined) {
      const statuses = typeof filter.status === 'string' ? [filter.status] : [...filter.status];
      if (statuses.length === 0) return [];
      query = query.where('status', 'in', statuses);
    }
    if (filter.workspace !== undefined) query = query.where('workspace', '=', filter.workspace);
    if (filter.originChat !== undefined) query = query.where('origin_chat', '=', filter.originChat);
    if (filter.limit !== undefined) query = query.limit(filter.limit);
    const rows = await query.orderBy('updated_at', 'desc').orderBy('id', 'desc').execute();
    return rows.map(toRunIndexRecord);
  }

  /** Every workspace with an indexed run. */
  async workspaces(): Promise<string[]> {
    const rows = await this.#db.selectFrom('runs').select('workspace').distinct().execute();
    return rows.map((r) => r.workspace);
  }

  /** Ids of the indexed runs of `workspace` (ids only: no run is read). */
  async idsIn(workspace: string): Promise<Set<string>> {
    const rows = await this.#db
      .selectFrom('runs')
      .select('id')
      .where('workspace', '=', workspace)
      .execute();
    return new Set(rows.map((r) => r.id));
  }

  /**
   * Finished runs (finished before `before`, ms) with when they were archived (null: not yet),
   * oldest finish first; from the partial index on finished_at, not a scan of every run.
   */
  async finishedBefore(
    before: number,
    workspace?: string,
  ): Promise<(RunIndexRecord & { archivedAt: number | null })[]> {
    let query = this.#db
      .selectFrom('runs')
      .selectAll()
      .where('finished_at', 'is not', null)
      .where('finished_at', '<', before);
    if (workspace !== undefined) query = query.where('workspace', '=', workspace);
    const rows = await query.orderBy('finished_at').orderBy('id').execute();
    return rows.map((r) => ({ ...toRunIndexRecord(r), archivedAt: r.archived_at ?? null }));
  }

  /** Records that a finished run's folder went into an archive at `at` (ms). */
  async markArchived(id: string, at?: number): Promise<void> {
    await this.#db
      .updateTable('runs')
      .set({ archived_at: at ?? this.#now() })
      .where('id', '=', id)
      .where('finished_at', 'is not', null)
      .execute();
  }

  /** When the run's folder was archived, or null (also for an unknown run). */
  async archivedAt(id: string): Promise<number | null> {
    const row = await this.#db
      .selectFrom('runs')
      .select('archived_at')
      .where('id', '=', id)
      .executeTakeFirst();
    return row?.archived_at ?? null;
  }

  /**
   * One page of the runs matching `q`, most recently updated first, read by key from an index
   * ending in (updated_at, id); the count stops at RUN_COUNT_CAP (a text search counts its page
   * only, `totalCapped` when more pages match).
   */
  search(q: RunSearch): Promise<RunPage> {
    return searchRuns(this.#db, q);
  }

  /**
   * The workflows, workspaces, starters and origin chats that occur in the index, sorted: each
   * read by skipping through its index (one seek per distinct value, not a walk of every run).
   */
  facets(): Promise<RunFacets> {
    return runFacets(this.#db);
  }

  /** Sets a run's status (and finishedAt on a terminal one); NotFoundError for an unknown run. */
  async updateStatus(id: string, status: RunIndexStatus, at?: number): Promise<RunIndexRecord> {
    const now = at ?? this.#now();
    const finished = TERMINAL_RUN_STATUSES.includes(status);
    const row = await withConstraintErrors(`run ${quoted(id)}`, () =>
      this.#db
        .updateTable('runs')
        .set((eb) => ({
          status,
          updated_at: now,
          finished_at: finished ? eb.fn.coalesce('finished_at', eb.val(now)) : null,
        }))
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirst(),
    );
    if (!row) throw new NotFoundError(`no run ${quoted(id)} in the index`);
    return toRunIndexRecord(row);
  }

  /** Runs started from a chat that got a new id follow it there (see BindingsRepo.moveChat). */
  async moveOriginChat(from: string, to: string): Promise<number> {
    const res = await this.#db
      .updateTable('runs')
      .set({ origin_chat: to })
      .where('origin_chat', '=', from)
      .executeTakeFirst();
    return Number(res.numUpdatedRows);
  }
}
