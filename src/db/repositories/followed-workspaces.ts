/** Workspaces whose `.codexclaw/` ledger a bridge follows read-only, with the offset announced. */
import type { Kysely } from 'kysely';
import type { Database } from '../schema.ts';
import type { Clock, RepoOptions } from './support.ts';

/** One followed workspace. */
export interface FollowedWorkspace {
  readonly workspace: string;
  /** Bytes of `.codexclaw/ledger.jsonl` already announced. */
  readonly offset: number;
}

/** Reads and writes `followed_workspaces`. */
export class FollowedWorkspacesRepo {
  readonly #db: Kysely<Database>;
  readonly #now: Clock;

  constructor(db: Kysely<Database>, opts: RepoOptions = {}) {
    this.#db = db;
    this.#now = opts.now ?? Date.now;
  }

  /** Follows a workspace from `offset`; following it again keeps the offset it has. */
  async follow(workspace: string, offset: number): Promise<boolean> {
    const now = this.#now();
    const r = await this.#db
      .insertInto('followed_workspaces')
      .values({ workspace, ledger_offset: offset, created_at: now, updated_at: now })
      .onConflict((oc) => oc.column('workspace').doNothing())
      .executeTakeFirst();
    return Number(r.numInsertedOrUpdatedRows ?? 0) > 0;
  }

  /** Stops following a workspace; false when it was not followed. */
  async unfollow(workspace: string): Promise<boolean> {
    const r = await this.#db
      .deleteFrom('followed_workspaces')
      .where('workspace', '=', workspace)
      .executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }

  /** Every followed workspace, oldest first. */
  async list(): Promise<FollowedWorkspace[]> {
    const rows = await this.#db
      .selectFrom('followed_workspaces')
      .select(['workspace', 'ledger_offset'])
      .orderBy('created_at')
      .orderBy('workspace')
      .execute();
    return rows.map((r) => ({ workspace: r.workspace, offset: r.ledger_offset }));
  }

  /** Records how far the workspace's ledger was announced. */
  async setOffset(workspace: string, offset: number): Promise<void> {
    await this.#db
      .updateTable('followed_workspaces')
      .set({ ledger_offset: offset, updated_at: this.#now() })
      .where('workspace', '=', workspace)
      .execute();
  }
}
