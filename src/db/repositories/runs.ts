/** The index of runs, for listing and lookup; each run's ledger stays the source of truth. */
import { type Kysely, sql } from 'kysely';
import { NotFoundError } from '../../errors.ts';
import { dialectOf } from '../dialects/index.ts';
import type { Database, Row, RunIndexStatus } from '../schema.ts';
import { withConstraintErrors } from '../sqlite-errors.ts';
import { runRecordOf } from './run-record.ts';
import { type Clock, quoted, type RepoOptions } from './support.ts';

/** Statuses that never change again; reaching one sets `finishedAt`. */
export const TERMINAL_RUN_STATUSES: readonly RunIndexStatus[] = [
  'completed',
  'failed',
  'cancelled',
];

/** One indexed run. */
export interface RunIndexRecord {
  id: string;
  workflowId: string;
  workspace: string;
  layout: string;
  status: RunIndexStatus;
  /** The starter's immutable actor id, e.g. 'telegram:42'. */
  startedBy: string | null;
  /** The starter as people know them (set by the console's list, see namedRunsIndex). */
  startedByName?: string;
  /** The chat ref the run was started from. */
  originChat: string | null;
  createdAt: number;
  updatedAt: number;
  finishedAt: number | null;
  /** The run's specification, cut to SPEC_INDEX_CHARS (null when indexed before 0010). */
  spec: string | null;
}

/** How much of a run's specification the index keeps for search. */
export const SPEC_INDEX_CHARS = 500;

/** A run's place in the list's order (newest updated first, then id): a page's edge. */
export interface RunKey {
  updatedAt: number;
  id: string;
}

/** Statuses of a run that waits on a person (an answer to a checkpoint, or a retry). */
export const WAITING_RUN_STATUSES: readonly RunIndexStatus[] = ['awaiting', 'blocked'];

/** The console's runs list query: filters, a search text, one page by key (never an OFFSET). */
export interface RunSearch {
  status?: RunIndexStatus;
  workflowId?: string;
  workspace?: string;
  startedBy?: string;
  /** The chat ref the run was started from. */
  originChat?: string;
  /** Runs waiting on a person (WAITING_RUN_STATUSES) that this person started. */
  waitingFor?: string;
  /** Updated at or after this time (ms): "updated in the last …". */
  updatedSince?: number;
  /** Updated before this time (ms): "idle for over …". */
  updatedBefore?: number;
  /** Part of the run id or of its specification (case-insensitive). */
  text?: string;
  /** Page size (1..500). */
  limit: number;
  /** The page of runs just older than this key (the "Older" link), or just newer (`after`). */
  before?: RunKey;
  after?: RunKey;
}

/** Matches counted at most: a count never walks the whole history. */
export const RUN_COUNT_CAP = 1000;

/** One page of runs, how many match (at most RUN_COUNT_CAP), and whether pages lie either side. */
export interface RunPage {
  items: RunIndexRecord[];
  total: number;
  /** `total` is RUN_COUNT_CAP and more match. */
  totalCapped?: boolean;
  hasNewer?: boolean;
  hasOlder?: boolean;
}

/** The distinct values the list's filters offer. */
export interface RunFacets {
  workflows: string[];
  workspaces: string[];
  startedBy: string[];
  /** Chats runs were started from. */
  chats?: string[];
  /** The starters as people know them, by id (set by the console's index, see namedRunsIndex). */
  startedByNames?: Record<string, string>;
}

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
    return runRecordOf(row);
  }

  /** The run with this id, or null. */
  async get(id: string): Promise<RunIndexRecord | null> {
    const row = await this.#db
      .selectFrom('runs')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirst();
    return row ? runRecordOf(row) : null;
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
    return rows.map(runRecordOf);
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
    return rows.map((r) => ({ ...runRecordOf(r), archivedAt: r.archived_at ?? null }));
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
  async search(q: RunSearch): Promise<RunPage> {
    const limit = Math.min(Math.max(q.limit, 1), 500);
    const statuses = searchStatuses(q);
    if (statuses?.length === 0) return { items: [], total: 0, hasNewer: false, hasOlder: false };
    if (q.startedBy !== undefined && q.waitingFor !== undefined && q.startedBy !== q.waitingFor) {
      return { items: [], total: 0, hasNewer: false, hasOlder: false };
    }
    let query = this.#db.selectFrom('runs');
    if (statuses !== undefined) query = query.where('status', 'in', statuses);
    if (q.workflowId !== undefined) query = query.where('workflow_id', '=', q.workflowId);
    if (q.workspace !== undefined) query = query.where('workspace', '=', q.workspace);
    if (q.waitingFor !== undefined) {
      // No index on the starter here, so the status index (live runs only) is the one read.
      const starter = dialectOf(this.#db).unindexed('started_by');
      query = query.where(sql<boolean>`${starter} = ${q.waitingFor}`);
    } else if (q.startedBy !== undefined) {
      query = query.where('started_by', '=', q.startedBy);
    }
    if (q.originChat !== undefined) query = query.where('origin_chat', '=', q.originChat);
    if (q.updatedSince !== undefined) query = query.where('updated_at', '>=', q.updatedSince);
    if (q.updatedBefore !== undefined) query = query.where('updated_at', '<', q.updatedBefore);
    if (q.text !== undefined && q.text !== '') {
      // LIKE with the wildcards of the search text escaped: "50%" finds "50%", not "50…".
      const pattern = `%${q.text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
      // SQLite's LIKE ignores ASCII case; Postgres needs ILIKE for the same search.
      const like = dialectOf(this.#db).likeIgnoringCase;
      query = query.where((eb) =>
        eb.or([
          eb('id', like, sql<string>`${pattern} escape '\\'`),
          eb('spec', like, sql<string>`${pattern} escape '\\'`),
        ]),
      );
    }
    const older = (k: RunKey) => sql<boolean>`(updated_at, id) < (${k.updatedAt}, ${k.id})`;
    const newer = (k: RunKey) => sql<boolean>`(updated_at, id) > (${k.updatedAt}, ${k.id})`;
    const desc = (qq: typeof query) =>
      qq.selectAll().orderBy('updated_at', 'desc').orderBy('id', 'desc');
    const exists = async (cond: ReturnType<typeof older>) =>
      (await query.select('id').where(cond).limit(1).execute()).length > 0;
    let items: Row<'runs'>[];
    let hasNewer: boolean;
    let hasOlder: boolean;
    if (q.after !== undefined) {
      const rows = await query
        .selectAll()
        .where(newer(q.after))
        .orderBy('updated_at', 'asc')
        .orderBy('id', 'asc')
        .limit(limit + 1)
        .execute();
      hasNewer = rows.length > limit;
      items = rows.slice(0, limit).reverse();
      const last = items.at(-1);
      hasOlder = last === undefined ? await exists(older(q.after)) : await exists(older(key(last)));
    } else {
      const rows = await desc(q.before === undefined ? query : query.where(older(q.before)))
        .limit(limit + 1)
        .execute();
      hasOlder = rows.length > limit;
      items = rows.slice(0, limit);
      const first = items[0];
      hasNewer =
        q.before === undefined
          ? false
          : await exists(newer(first === undefined ? q.before : key(first)));
    }
    if (q.text !== undefined && q.text !== '') {
      // A text search is not counted past its page: counting would read the whole history.
      return {
        items: items.map(runRecordOf),
        total: items.length,
        ...((hasOlder || hasNewer) && { totalCapped: true }),
        hasNewer,
        hasOlder,
      };
    }
    const counted = await this.#db
      .selectFrom(
        query
          .select(sql<number>`1`.as('one'))
          .limit(RUN_COUNT_CAP + 1)
          .as('m'),
      )
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    const n = Number(counted.n);
    return {
      items: items.map(runRecordOf),
      total: Math.min(n, RUN_COUNT_CAP),
      ...(n > RUN_COUNT_CAP && { totalCapped: true }),
      hasNewer,
      hasOlder,
    };
  }

  /**
   * The workflows, workspaces, starters and origin chats that occur in the index, sorted: each
   * read by skipping through its index (one seek per distinct value, not a walk of every run).
   */
  async facets(): Promise<RunFacets> {
    const distinct = async (column: 'workflow_id' | 'workspace' | 'started_by' | 'origin_chat') => {
      const col = sql.ref(column);
      const rows = await sql<{ v: string }>`with recursive d(v) as (
          select min(${col}) from runs
          union all
          select (select min(${col}) from runs where ${col} > d.v) from d where d.v is not null
        ) select v from d where v is not null limit 200`.execute(this.#db);
      return rows.rows.map((r) => String(r.v));
    };
    const [workflows, workspaces, startedBy, chats] = await Promise.all([
      distinct('workflow_id'),
      distinct('workspace'),
      distinct('started_by'),
      distinct('origin_chat'),
    ]);
    return { workflows, workspaces, startedBy, chats };
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
    return runRecordOf(row);
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

/** The statuses a search may match (undefined: any), after its status and waiting filters. */
function searchStatuses(q: RunSearch): readonly RunIndexStatus[] | undefined {
  if (q.waitingFor === undefined) return q.status === undefined ? undefined : [q.status];
  if (q.status === undefined) return WAITING_RUN_STATUSES;
  return WAITING_RUN_STATUSES.includes(q.status) ? [q.status] : [];
}

function key(row: Row<'runs'>): RunKey {
  return { updatedAt: row.updated_at, id: row.id };
}
