/**
 * The web console's one-time login tokens and sessions, stored as SHA-256 digests only: whoever
 * reads bridge.db learns no link and no cookie. Shaped as the console's `ConsoleAuthStore`, so
 * the running bridge and `phasebridge login` (another process) share them through bridge.db.
 */
import type { Kysely } from 'kysely';
// zod/mini, as config.ts: every command opening bridge.db loads this file (classic zod: ~15 ms).
import * as z from 'zod/mini';
import type { Database } from '../schema.ts';
import { withConstraintErrors } from '../sqlite-errors.ts';
import type { Clock, RepoOptions } from './support.ts';

/** A chat person signed in to the console, and the chat whose roles apply (null: global only). */
export interface ConsolePersonRecord {
  readonly platform: string;
  readonly id: string;
  readonly display: string;
  readonly chatRef: string | null;
  readonly threadRef?: string;
}

/** A stored console session; the cookie value itself is never stored. */
export interface ConsoleSessionRecord {
  /** Public id (routing of private answers, logs, `phasebridge logins revoke <id>`). */
  sessionId: string;
  createdAt: number;
  lastSeenAt: number;
  /** The chat person signed in; null or absent = the local admin. */
  person?: ConsolePersonRecord | null;
  /** When the session ends whatever its use; null or absent = only when idle. */
  expiresAt?: number | null;
}

const personSchema = z.object({
  platform: z.string(),
  id: z.string(),
  display: z.string(),
  chatRef: z.nullable(z.string()),
  threadRef: z.optional(z.string()),
});

/** A stored person column; an unreadable one is treated as no person at all (no session). */
function personOf(json: string | null): ConsolePersonRecord | null | undefined {
  if (json === null) return null;
  try {
    const parsed = personSchema.safeParse(JSON.parse(json));
    if (!parsed.success) return undefined;
    const { threadRef, ...rest } = parsed.data;
    return threadRef === undefined ? rest : { ...rest, threadRef };
  } catch {
    return undefined;
  }
}

const personJson = (p: ConsolePersonRecord | null | undefined): string | null =>
  p == null ? null : JSON.stringify(p);

/** Reads and writes `console_login_tokens` and `console_sessions`. */
export class ConsoleAuthRepo {
  readonly #db: Kysely<Database>;
  readonly #now: Clock;

  constructor(db: Kysely<Database>, opts: RepoOptions = {}) {
    this.#db = db;
    this.#now = opts.now ?? Date.now;
  }

  /**
   * Stores a login token's digest, usable until `expiresAt` (ms), signing in `person` (default
   * the local admin); ConflictError if it exists.
   */
  async addLoginToken(
    tokenHash: string,
    expiresAt: number,
    person: ConsolePersonRecord | null = null,
  ): Promise<void> {
    await withConstraintErrors(
      'this login token',
      () =>
        this.#db
          .insertInto('console_login_tokens')
          .values({
            token_hash: tokenHash,
            expires_at: expiresAt,
            created_at: this.#now(),
            person_json: personJson(person),
          })
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

  /** Uses a login token up like `consumeLoginToken`; whom it signs in, or null when not valid. */
  async claimLoginToken(
    tokenHash: string,
    now: number,
  ): Promise<{ person: ConsolePersonRecord | null } | null> {
    const row = await this.#db
      .deleteFrom('console_login_tokens')
      .where('token_hash', '=', tokenHash)
      .where('expires_at', '>', now)
      .returning('person_json')
      .executeTakeFirst();
    if (row === undefined) return null;
    const person = personOf(row.person_json);
    return person === undefined ? null : { person };
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
        person_json: personJson(session.person),
        expires_at: session.expiresAt ?? null,
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
    return row ? toSession(row) : null;
  }

  /** Every open session, newest first (for `phasebridge logins`). */
  async listSessions(): Promise<ConsoleSessionRecord[]> {
    const rows = await this.#db
      .selectFrom('console_sessions')
      .selectAll()
      .orderBy('created_at', 'desc')
      .execute();
    return rows.map(toSession).filter((s): s is ConsoleSessionRecord => s !== null);
  }

  /** Ends the session with this public id at once; false when there is none. */
  async revokeSession(sessionId: string): Promise<boolean> {
    const res = await this.#db
      .deleteFrom('console_sessions')
      .where('session_id', '=', sessionId)
      .executeTakeFirst();
    return res.numDeletedRows > 0n;
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
    await this.#db
      .deleteFrom('console_sessions')
      .where((eb) => eb.or([eb('last_seen_at', '<', idleBefore), eb('expires_at', '<=', now)]))
      .execute();
  }
}

/** A session row as a record; null when its person column cannot be read (never a wrong person). */
function toSession(row: {
  session_id: string;
  created_at: number;
  last_seen_at: number;
  person_json: string | null;
  expires_at: number | null;
}): ConsoleSessionRecord | null {
  const person = personOf(row.person_json);
  if (person === undefined) return null;
  return {
    sessionId: row.session_id,
    createdAt: row.created_at,
    lastSeenAt: row.last_seen_at,
    person,
    expiresAt: row.expires_at,
  };
}
