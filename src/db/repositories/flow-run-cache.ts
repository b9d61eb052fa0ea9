/**
 * `flow_run_cache`: each flow run.yaml's stamp and status when last read, per workspace. The
 * bridge.db side of FlowStatusCache (src/jobs/orchestrator/flow-sessions.ts): looking for
 * interrupted flow runs then reads only the run.yaml files that changed since.
 */
import type { Kysely } from 'kysely';
import type { FlowStatusCache, FlowStatusEntry } from '../../jobs/orchestrator/flow-sessions.ts';
import type { Database } from '../schema.ts';
import type { Clock, RepoOptions } from './support.ts';

/** Rows per statement (5 bound values each; SQLite allows 32,766). */
const CHUNK = 500;

/** Reads and writes `flow_run_cache`. */
export class FlowRunCacheRepo implements FlowStatusCache {
  readonly #db: Kysely<Database>;
  readonly #now: Clock;

  constructor(db: Kysely<Database>, opts: RepoOptions = {}) {
    this.#db = db;
    this.#now = opts.now ?? Date.now;
  }

  async load(workspace: string): Promise<Map<string, FlowStatusEntry>> {
    const rows = await this.#db
      .selectFrom('flow_run_cache')
      .select(['run_id', 'stamp', 'status'])
      .where('workspace', '=', workspace)
      .execute();
    return new Map(
      rows.map((r) => [r.run_id, { runId: r.run_id, stamp: r.stamp, status: r.status }]),
    );
  }

  async save(
    workspace: string,
    put: readonly FlowStatusEntry[],
    gone: readonly string[],
  ): Promise<void> {
    const now = this.#now();
    await this.#db.transaction().execute(async (tx) => {
      for (let i = 0; i < put.length; i += CHUNK) {
        await tx
          .insertInto('flow_run_cache')
          .values(
            put.slice(i, i + CHUNK).map((e) => ({
              workspace,
              run_id: e.runId,
              stamp: e.stamp,
              status: e.status,
              updated_at: now,
            })),
          )
          .onConflict((oc) =>
            oc.columns(['workspace', 'run_id']).doUpdateSet((eb) => ({
              stamp: eb.ref('excluded.stamp'),
              status: eb.ref('excluded.status'),
              updated_at: eb.ref('excluded.updated_at'),
            })),
          )
          .execute();
      }
      for (let i = 0; i < gone.length; i += CHUNK) {
        await tx
          .deleteFrom('flow_run_cache')
          .where('workspace', '=', workspace)
          .where('run_id', 'in', gone.slice(i, i + CHUNK))
          .execute();
      }
    });
  }
}
