/** The console's runs list over the index: filters, text search, pages by key, and facets. */
import { type Kysely, sql } from 'kysely';
import { dialectOf } from '../dialects/index.ts';
import type { Database, Row, RunIndexStatus } from '../schema.ts';
import { type RunIndexRecord, toRunIndexRecord } from './runs-record.ts';

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

/**
 * One page of the runs matching `q`, most recently updated first, read by key from an index
 * ending in (updated_at, id); the count stops at RUN_COUNT_CAP (a text search counts its page
 * only, `totalCapped` when more pages match).
 */
export async function searchRuns(db: Kysely<Database>, q: RunSearch): Promise<RunPage> {
  const limit = Math.min(Math.max(q.limit, 1), 500);
  const statuses = searchStatuses(q);
  if (statuses?.length === 0) return { items: [], total: 0, hasNewer: false, hasOlder: false };
  if (q.startedBy !== undefined && q.waitingFor !== undefined && q.startedBy !== q.waitingFor) {
    return { items: [], total: 0, hasNewer: false, hasOlder: false };
  }
  let query = db.selectFrom('runs');
  if (statuses !== undefined) query = query.where('status', 'in', statuses);
  if (q.workflowId !== undefined) query = query.where('workflow_id', '=', q.workflowId);
  if (q.workspace !== undefined) query = query.where('workspace', '=', q.workspace);
  if (q.waitingFor !== undefined) {
    // No index on the starter here, so the status index (live runs only) is the one read.
    const starter = dialectOf(db).unindexed('started_by');
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
    const like = dialectOf(db).likeIgnoringCase;
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
      items: items.map(toRunIndexRecord),
      total: items.length,
      ...((hasOlder || hasNewer) && { totalCapped: true }),
      hasNewer,
      hasOlder,
    };
  }
  const counted = await db
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
    items: items.map(toRunIndexRecord),
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
export async function runFacets(db: Kysely<Database>): Promise<RunFacets> {
  const distinct = async (column: 'workflow_id' | 'workspace' | 'started_by' | 'origin_chat') => {
    const col = sql.ref(column);
    const rows = await sql<{ v: string }>`with recursive d(v) as (
        select min(${col}) from runs
        union all
        select (select min(${col}) from runs where ${col} > d.v) from d where d.v is not null
      ) select v from d where v is not null limit 200`.execute(db);
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

/** The statuses a search may match (undefined: any), after its status and waiting filters. */
function searchStatuses(q: RunSearch): readonly RunIndexStatus[] | undefined {
  if (q.waitingFor === undefined) return q.status === undefined ? undefined : [q.status];
  if (q.status === undefined) return WAITING_RUN_STATUSES;
  return WAITING_RUN_STATUSES.includes(q.status) ? [q.status] : [];
}

/** The row's place in the list's order. */
function key(row: Row<'runs'>): RunKey {
  return { updatedAt: row.updated_at, id: row.id };
}
