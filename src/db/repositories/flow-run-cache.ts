/**
 * `flow_run_cache`: per workspace, the stamp of `.flow/runs` when listed, the runs read on every
 * lookup, and each finished run.yaml's stamp and status (JSON, decoded only when the listing
 * changed). The bridge.db side of FlowStatusCache (src/jobs/orchestrator/flow-sessions.ts). A
 * damaged row counts as empty: the runs are read again and the row rewritten.
 */
import type { Kysely } from 'kysely';
import type {
  FlowCacheHead,
  FlowCacheUpdate,
  FlowStatusCache,
  FlowStatusEntry,
} from '../../jobs/orchestrator/flow-sessions.ts';
import type { Database } from '../schema.ts';
import type { Clock, RepoOptions } from './support.ts';

type Entries = Record<string, [stamp: string, status: string]>;

/** The parsed JSON column, or `empty` when damaged (it is only a cache). */
function decode<T>(json: string | undefined, ok: (v: unknown) => boolean, empty: T): T {
  if (json === undefined) return empty;
  try {
    const v = JSON.parse(json) as unknown;
    return ok(v) ? (v as T) : empty;
  } catch {
    return empty;
  }
}

const isRecord = (v: unknown) => v !== null && typeof v === 'object' && !Array.isArray(v);
const isIdList = (v: unknown) => Array.isArray(v) && v.every((x) => typeof x === 'string');

/** Reads and writes `flow_run_cache`. */
export class FlowRunCacheRepo implements FlowStatusCache {
  readonly #db: Kysely<Database>;
  readonly #now: Clock;

  constructor(db: Kysely<Database>, opts: RepoOptions = {}) {
    this.#db = db;
    this.#now = opts.now ?? Date.now;
  }

  async head(workspace: string): Promise<FlowCacheHead | null> {
    const row = await this.#db
      .selectFrom('flow_run_cache')
      .select(['dir_stamp', 'open_json'])
      .where('workspace', '=', workspace)
      .executeTakeFirst();
    if (row === undefined) return null;
    const open = decode<string[] | null>(row.open_json, isIdList, null);
    return open === null ? null : { dirStamp: row.dir_stamp, open };
  }

  async load(workspace: string): Promise<Map<string, FlowStatusEntry>> {
    const out = new Map<string, FlowStatusEntry>();
    for (const [runId, e] of Object.entries(await this.#entries(this.#db, workspace))) {
      if (Array.isArray(e)) out.set(runId, { runId, stamp: String(e[0]), status: String(e[1]) });
    }
    return out;
  }

  async save(workspace: string, update: FlowCacheUpdate): Promise<void> {
    // Merged with what another process may have stored meanwhile (last writer wins per run).
    await this.#db.transaction().execute(async (tx) => {
      const entries = await this.#entries(tx, workspace);
      for (const id of update.gone) delete entries[id];
      for (const e of update.put) entries[e.runId] = [e.stamp, e.status];
      const row = {
        workspace,
        dir_stamp: update.dirStamp,
        open_json: JSON.stringify(update.open),
        entries_json: JSON.stringify(entries),
        updated_at: this.#now(),
      };
      await tx
        .insertInto('flow_run_cache')
        .values(row)
        .onConflict((oc) =>
          oc.column('workspace').doUpdateSet({
            dir_stamp: row.dir_stamp,
            open_json: row.open_json,
            entries_json: row.entries_json,
            updated_at: row.updated_at,
          }),
        )
        .execute();
    });
  }

  async #entries(db: Kysely<Database>, workspace: string): Promise<Entries> {
    const row = await db
      .selectFrom('flow_run_cache')
      .select('entries_json')
      .where('workspace', '=', workspace)
      .executeTakeFirst();
    return decode<Entries>(row?.entries_json, isRecord, {});
  }
}
