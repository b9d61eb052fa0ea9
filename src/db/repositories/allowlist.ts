/** The allowlist: roles of platform users, globally or in one binding. Deny by default. */
import type { Kysely } from 'kysely';
import { ROLES } from '../roles.ts';
import type { Database, Role, Row } from '../schema.ts';
import { withConstraintErrors } from '../sqlite-errors.ts';
import { type Clock, quoted, type RepoOptions } from './support.ts';

export { ROLES };

/** The stronger of two roles (null = no role). */
export function strongerRole(a: Role | null, b: Role | null): Role | null {
  if (a === null) return b;
  if (b === null) return a;
  return ROLES.indexOf(a) >= ROLES.indexOf(b) ? a : b;
}

/** Where a role applies: everywhere, or in one binding. */
export type AllowScope = 'global' | { bindingId: number };

/** One allowlist entry; `scope` is 'global' or 'binding:<id>'. */
export interface AllowEntry {
  id: number;
  scope: string;
  bindingId: number | null;
  platform: string;
  userId: string;
  role: Role;
  createdAt: number;
}

/** Reads and writes `allowlist`. */
export class AllowlistRepo {
  readonly #db: Kysely<Database>;
  readonly #now: Clock;

  constructor(db: Kysely<Database>, opts: RepoOptions = {}) {
    this.#db = db;
    this.#now = opts.now ?? Date.now;
  }

  /** Gives the user `role` in `scope`, replacing a role it had there; ConflictError for a missing binding. */
  async allow(
    scope: AllowScope,
    platform: string,
    userId: string,
    role: Role,
  ): Promise<AllowEntry> {
    const bindingId = bindingOf(scope);
    const row = await withConstraintErrors(
      `a role for ${platform} user ${quoted(userId)}`,
      () =>
        this.#db
          .insertInto('allowlist')
          .values({
            binding_id: bindingId,
            platform,
            user_id: userId,
            role,
            created_at: this.#now(),
          })
          .onConflict((oc) =>
            oc
              .columns(['scope', 'platform', 'user_id'])
              .doUpdateSet((eb) => ({ role: eb.ref('excluded.role') })),
          )
          .returningAll()
          .executeTakeFirstOrThrow(),
      { foreignKey: `binding ${bindingId} does not exist` },
    );
    return toEntry(row);
  }

  /** Removes the user's role in exactly this scope; false when it had none there. */
  async deny(scope: AllowScope, platform: string, userId: string): Promise<boolean> {
    const res = await this.#db
      .deleteFrom('allowlist')
      .where('scope', '=', scopeKey(scope))
      .where('platform', '=', platform)
      .where('user_id', '=', userId)
      .executeTakeFirst();
    return res.numDeletedRows > 0n;
  }

  /** The user's effective role: the stronger of its global role and its role in `bindingId`. */
  async roleOf(platform: string, userId: string, bindingId?: number | null): Promise<Role | null> {
    const scopes = ['global', ...(bindingId == null ? [] : [scopeKey({ bindingId })])];
    const rows = await this.#db
      .selectFrom('allowlist')
      .select('role')
      .where('platform', '=', platform)
      .where('user_id', '=', userId)
      .where('scope', 'in', scopes)
      .execute();
    return rows.reduce<Role | null>((best, r) => strongerRole(best, r.role), null);
  }

  /** Entries, optionally of one scope and/or platform, ordered by scope, platform and user. */
  async list(filter: { scope?: AllowScope; platform?: string } = {}): Promise<AllowEntry[]> {
    let query = this.#db.selectFrom('allowlist').selectAll();
    if (filter.scope !== undefined) query = query.where('scope', '=', scopeKey(filter.scope));
    if (filter.platform !== undefined) query = query.where('platform', '=', filter.platform);
    const rows = await query.orderBy('scope').orderBy('platform').orderBy('user_id').execute();
    return rows.map(toEntry);
  }
}

function bindingOf(scope: AllowScope): number | null {
  return scope === 'global' ? null : scope.bindingId;
}

/** The stored `scope` text, as the generated column computes it. */
function scopeKey(scope: AllowScope): string {
  return scope === 'global' ? 'global' : `binding:${scope.bindingId}`;
}

function toEntry(row: Row<'allowlist'>): AllowEntry {
  return {
    id: row.id,
    scope: row.scope,
    bindingId: row.binding_id,
    platform: row.platform,
    userId: row.user_id,
    role: row.role,
    createdAt: row.created_at,
  };
}
