/**
 * The web console's one-time login tokens and sessions, stored as SHA-256 digests only: whoever
 * reads bridge.db learns no link and no cookie. Shaped as the console's `ConsoleAuthStore`, so
 * the running bridge and `phasebridge login` (another process) share them through bridge.db.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../schema.ts';
import { withConstraintErrors } from '../sqlite-errors.ts';
import type { Clock, RepoOptions } from './support.ts';

/** A stored console session; the cookie value itself is never stored. */
export interface ConsoleSessionRecord {
  /** Public id (routing of private answers, logs). */
  sessionId: string;
  createdAt: number;
  lastSeenAt: number;
}

/** Reads and writes `console_login_tokens` and `console_sessions`. */
export class ConsoleAuthRepo {
  readonly #db: Kysely<Database>;
  readonly #now: Clock;

  constructor(db: Kysely<Database>, opts: RepoOptions = {}) {
    this.#db = db;
    this.#now = opts.now ?? Date.now;
  }

  /** Stores a login token's digest, usable until `expiresAt` (ms); ConflictError if it exists. */
  async addLoginToken(tokenHash: string, expiresAt: number): Promise<void> {
    await withConstraintErrors(
      'this login token',
      () =>
        this.#db
          .insertInto('console_login_tokens')
          .values({ token_hash: tokenHash, expires_at: expiresAt, created_at: this.#now() })
          .execute(),
      { unique: 'this login token already exists' },
    );
  }

  /** Uses a login token up: true exactly once (one DELETE claims it), and only before it expires. */
  async consumeLoginToken(tokenHash: string, now: number): Promise<boolean> {
    const res = await this.#db
      .deleteFrom('console_login_tokens')
      .where('token_hash', '=', tokenHash)
      .where('expires_at', '>', now)
      .executeTakeFirst();
    return res.numDeletedRows > 0n;
  }

  /** Stores a new session under the digest of its cookie. */
  async addSession(cookieHash: string, session: ConsoleSessionRecord): Promise<void> {
    await this.#db
      .insertInto('console_sessions')
      .values({
        cookie_hash: cookieHash,
        session_id: session.sessionId,
        created_at: session.createdAt,
        last_seen_at: session.lastSeenAt,
      })
      .execute();
  }

  /** The session whose cookie has this digest, or null. */
  async findSession(cookieHash: string): Promise<ConsoleSessionRecord | null> {
    const row = await this.#db
      .selectFrom('console_sessions')
      .selectAll()
      .where('cookie_hash', '=', cookieHash)
      .executeTakeFirst();
    return row
      ? { sessionId: row.session_id, createdAt: row.created_at, lastSeenAt: row.last_seen_at }
      : null;
  }

  /** Records a use of the session. */
  async touchSession(cookieHash: string, lastSeenAt: number): Promise<void> {
    await this.#db
      .updateTable('console_sessions')
      .set({ last_seen_at: lastSeenAt })
      .where('cookie_hash', '=', cookieHash)
      .execute();
  }

  /** Ends the session. */
  async deleteSession(cookieHash: string): Promise<void> {
    await this.#db.deleteFrom('console_sessions').where('cookie_hash', '=', cookieHash).execute();
  }

  /** Deletes login tokens expired at `now` and sessions last used before `idleBefore`. */
  async prune(now: number, idleBefore: number): Promise<void> {
    await this.#db.deleteFrom('console_login_tokens').where('expires_at', '<=', now).execute();
    await this.#db.deleteFrom('console_sessions').where('last_seen_at', '<', idleBefore).execute();
  }
}
