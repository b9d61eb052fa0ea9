/** One-time pairing codes, stored only as hashes; each can be consumed once before it expires. */
import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../schema.ts';
import { withConstraintErrors } from '../sqlite-errors.ts';
import type { Clock, RepoOptions } from './support.ts';

/** Result of `consume`: 'ok' exactly once per code. */
export type ConsumeResult = 'ok' | 'unknown' | 'used' | 'expired';

/**
 * The stored form of a code: SHA-256 (hex) of the code trimmed and upper-cased, so a code typed
 * in lower case still matches. Creator and consumer must both use this.
 */
export function hashPairingCode(code: string): string {
  return createHash('sha256').update(code.trim().toUpperCase()).digest('hex');
}

/** Reads and writes `pairing_codes`. */
export class PairingRepo {
  readonly #db: Kysely<Database>;
  readonly #now: Clock;

  constructor(db: Kysely<Database>, opts: RepoOptions = {}) {
    this.#db = db;
    this.#now = opts.now ?? Date.now;
  }

  /** Stores a new code hash valid until `expiresAt` (ms); ConflictError if it exists. */
  async create(codeHash: string, expiresAt: number): Promise<void> {
    await withConstraintErrors(
      'this pairing code',
      () =>
        this.#db
          .insertInto('pairing_codes')
          .values({ code_hash: codeHash, expires_at: expiresAt, created_at: this.#now() })
          .execute(),
      { unique: 'this pairing code already exists' },
    );
  }

  /**
   * Uses the code at `now`. A single conditional UPDATE claims it, so of two concurrent consumers
   * (even in two processes) exactly one gets 'ok'; the others learn why not.
   */
  async consume(codeHash: string, now: number): Promise<ConsumeResult> {
    const claimed = await this.#db
      .updateTable('pairing_codes')
      .set({ used_at: now })
      .where('code_hash', '=', codeHash)
      .where('used_at', 'is', null)
      .where('expires_at', '>', now)
      .executeTakeFirst();
    if (claimed.numUpdatedRows > 0n) return 'ok';
    const row = await this.#db
      .selectFrom('pairing_codes')
      .select(['used_at'])
      .where('code_hash', '=', codeHash)
      .executeTakeFirst();
    if (!row) return 'unknown';
    return row.used_at !== null ? 'used' : 'expired';
  }

  /** Deletes codes that expired before `now` (used or not); returns how many. */
  async deleteExpired(now: number): Promise<number> {
    const res = await this.#db
      .deleteFrom('pairing_codes')
      .where('expires_at', '<=', now)
      .executeTakeFirst();
    return Number(res.numDeletedRows);
  }
}
