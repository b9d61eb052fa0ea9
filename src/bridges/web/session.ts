/**
 * Login and sessions of the web console. Like Jupyter, `phasebridge serve` (and `phasebridge
 * login`) prints a link with a one-time login token; opening it sets an HttpOnly,
 * SameSite=Strict session cookie. Tokens and cookies are stored only as SHA-256 digests, in a
 * `ConsoleAuthStore` (bridge.db in a bridge, so a logged-in browser stays logged in across a
 * restart). Each session's CSRF token is derived from its cookie, so it is never stored.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** Name of the session cookie. */
export const SESSION_COOKIE = 'pb_session';

/** How long an unused login token stays valid by default: 24 h. */
export const LOGIN_TOKEN_TTL_MS = 24 * 3600_000;

/** How long a session signed in through chat lasts, however much it is used: 12 h. */
export const PERSON_SESSION_TTL_MS = 12 * 3600_000;

/** How long a sign-in link sent in chat stays valid: 15 min. */
export const CHAT_LOGIN_TOKEN_TTL_MS = 15 * 60_000;

/**
 * A chat person signed in to the console (through the `console` chat command): who, and the chat
 * whose binding and roles decide what they may do (null: the console chat, global roles only).
 */
export interface ConsolePerson {
  readonly platform: string;
  readonly id: string;
  readonly display: string;
  readonly chatRef: string | null;
  /** The thread of `chatRef` when the chat is bound per thread. */
  readonly threadRef?: string;
}

/** A logged-in browser. `id` is public (routing, logs); the cookie value is the secret. */
export interface Session {
  readonly id: string;
  readonly csrfToken: string;
  readonly createdAt: number;
  lastSeenAt: number;
  /** The chat person signed in; null = the local admin `web:admin`. */
  readonly person: ConsolePerson | null;
}

/** A stored session; the cookie value itself is never stored. */
export interface StoredSession {
  readonly sessionId: string;
  readonly createdAt: number;
  readonly lastSeenAt: number;
  /** The chat person signed in; null or absent = the local admin. */
  readonly person?: ConsolePerson | null;
  /** When the session ends whatever its use (ms); null or absent = only when idle. */
  readonly expiresAt?: number | null;
}

/** What a used-up login token grants: a session of this person (null: the local admin). */
export interface LoginGrant {
  readonly person: ConsolePerson | null;
}

/**
 * Where login tokens and sessions are kept, by the hex SHA-256 digest of the secret. bridge.db's
 * `ConsoleAuthRepo` fits, so `phasebridge login` in another process can add tokens.
 */
export interface ConsoleAuthStore {
  /** Stores a login token's digest, usable until `expiresAt` (ms), signing in `person` (default the local admin). */
  addLoginToken(tokenHash: string, expiresAt: number, person?: ConsolePerson | null): Promise<void>;
  /** Uses a login token up: true exactly once, and only before it expires. */
  consumeLoginToken(tokenHash: string, now: number): Promise<boolean>;
  /** Uses a login token up like `consumeLoginToken`, answering whom it signs in (null: not valid). */
  claimLoginToken(tokenHash: string, now: number): Promise<LoginGrant | null>;
  /** Stores a new session under the digest of its cookie. */
  addSession(cookieHash: string, session: StoredSession): Promise<void>;
  /** The session whose cookie has this digest, or null. */
  findSession(cookieHash: string): Promise<StoredSession | null>;
  /** Records a use of the session. */
  touchSession(cookieHash: string, lastSeenAt: number): Promise<void>;
  /** Ends the session. */
  deleteSession(cookieHash: string): Promise<void>;
  /** Deletes login tokens expired at `now` and sessions last used before `idleBefore`. */
  prune(now: number, idleBefore: number): Promise<void>;
}

/** Options of `SessionStore`. */
export interface SessionStoreOptions {
  /** How long an unused login token stays valid; default 24 h. */
  readonly loginTokenTtlMs?: number;
  /** A session unused this long is dropped; default 12 h. */
  readonly sessionIdleMs?: number;
  /** A session signed in through chat ends this long after sign-in; default 12 h. */
  readonly personSessionTtlMs?: number;
  readonly now?: () => number;
}

/** A session's last use is written at most this often (not on every request of an open page). */
const TOUCH_EVERY_MS = 60_000;

/** The stored form of a login token or cookie: hex SHA-256. */
export const secretDigest = (secret: string): string =>
  createHash('sha256').update(secret, 'utf8').digest('hex');
const randomToken = (): string => randomBytes(32).toString('base64url');
/** The CSRF token of a session: an HMAC of its cookie, so nothing more is stored. */
const csrfOf = (cookieValue: string): string =>
  createHmac('sha256', cookieValue).update('phasebridge console csrf').digest('base64url');

/** Constant-time equality of two strings (different lengths are simply unequal). */
export function safeEqual(a: string, b: string): boolean {
  const x = createHash('sha256').update(a, 'utf8').digest();
  const y = createHash('sha256').update(b, 'utf8').digest();
  return timingSafeEqual(x, y);
}

/**
 * Creates a one-time login token (43 url-safe characters, 256 random bits), stores its digest,
 * and returns the token. `phasebridge login` calls this on bridge.db directly.
 */
export async function issueLoginToken(
  store: Pick<ConsoleAuthStore, 'addLoginToken'>,
  ttlMs: number = LOGIN_TOKEN_TTL_MS,
  now: number = Date.now(),
  person: ConsolePerson | null = null,
): Promise<string> {
  const token = randomToken();
  await store.addLoginToken(secretDigest(token), now + ttlMs, person);
  return token;
}

/** `http://127.0.0.1:7717/?token=…`: the link that logs a browser in, once. */
export function consoleLoginUrl(baseUrl: string, token: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/?token=${encodeURIComponent(token)}`;
}

/** Login tokens and sessions of one console, over a store. */
export class SessionStore {
  readonly #store: ConsoleAuthStore;
  readonly #tokenTtl: number;
  readonly #idle: number;
  readonly #personTtl: number;
  readonly #now: () => number;

  constructor(
    store: ConsoleAuthStore = new MemoryConsoleAuth(),
    options: SessionStoreOptions = {},
  ) {
    this.#store = store;
    this.#tokenTtl = options.loginTokenTtlMs ?? LOGIN_TOKEN_TTL_MS;
    this.#idle = options.sessionIdleMs ?? 12 * 3600_000;
    this.#personTtl = options.personSessionTtlMs ?? PERSON_SESSION_TTL_MS;
    this.#now = options.now ?? Date.now;
  }

  /** A new one-time login token. */
  createLoginToken(): Promise<string> {
    return issueLoginToken(this.#store, this.#tokenTtl, this.#now());
  }

  /** True once for a valid token: the token is used up by this call. */
  consumeLoginToken(candidate: string): Promise<boolean> {
    // Looked up by digest, so the lookup's timing says nothing about the secret.
    return this.#store.consumeLoginToken(secretDigest(candidate), this.#now());
  }

  /** Whom a valid token signs in (the token is used up by this call); null when not valid. */
  claimLoginToken(candidate: string): Promise<LoginGrant | null> {
    return this.#store.claimLoginToken(secretDigest(candidate), this.#now());
  }

  /**
   * Opens a session (of `person`, default the local admin); returns it with the cookie value
   * that names it. A person's session ends `personSessionTtlMs` after it opens.
   */
  async createSession(
    person: ConsolePerson | null = null,
  ): Promise<{ session: Session; cookieValue: string }> {
    const cookieValue = randomToken();
    const now = this.#now();
    await this.#store.prune(now, now - this.#idle);
    const stored = {
      // Hex: a base64url id may begin with '-', which `logins revoke <id>` read as an option.
      sessionId: randomBytes(9).toString('hex'),
      createdAt: now,
      person,
      expiresAt: person === null ? null : now + this.#personTtl,
    };
    await this.#store.addSession(secretDigest(cookieValue), { ...stored, lastSeenAt: now });
    const session = { id: stored.sessionId, csrfToken: csrfOf(cookieValue), createdAt: now };
    return { session: { ...session, lastSeenAt: now, person }, cookieValue };
  }

  /** The live session named by a Cookie header, refreshing its idle timer; else undefined. */
  async fromCookieHeader(header: string | undefined): Promise<Session | undefined> {
    const value = parseCookies(header).get(SESSION_COOKIE);
    if (value === undefined) return undefined;
    const key = secretDigest(value);
    const stored = await this.#store.findSession(key);
    if (!stored) return undefined;
    const now = this.#now();
    const expired = stored.expiresAt != null && now >= stored.expiresAt;
    if (expired || now - stored.lastSeenAt > this.#idle) {
      await this.#store.deleteSession(key);
      return undefined;
    }
    if (now - stored.lastSeenAt >= Math.min(TOUCH_EVERY_MS, this.#idle / 10)) {
      await this.#store.touchSession(key, now);
    }
    return {
      id: stored.sessionId,
      csrfToken: csrfOf(value),
      createdAt: stored.createdAt,
      lastSeenAt: now,
      person: stored.person ?? null,
    };
  }

  /** True while the session a Cookie header names exists and has not ended (its use is not recorded). */
  async isLive(header: string | undefined): Promise<boolean> {
    const value = parseCookies(header).get(SESSION_COOKIE);
    if (value === undefined) return false;
    const stored = await this.#store.findSession(secretDigest(value));
    if (!stored) return false;
    const now = this.#now();
    const ended = stored.expiresAt != null && now >= stored.expiresAt;
    return !ended && now - stored.lastSeenAt <= this.#idle;
  }

  /** True when `candidate` is the session's CSRF token. */
  checkCsrf(session: Session, candidate: string | undefined): boolean {
    return candidate !== undefined && candidate !== '' && safeEqual(session.csrfToken, candidate);
  }
}

/** Tokens and sessions in memory: a console used without bridge.db forgets them on restart. */
export class MemoryConsoleAuth implements ConsoleAuthStore {
  readonly #tokens = new Map<string, { expiresAt: number; person: ConsolePerson | null }>();
  readonly #sessions = new Map<string, StoredSession>();

  async addLoginToken(
    tokenHash: string,
    expiresAt: number,
    person: ConsolePerson | null = null,
  ): Promise<void> {
    this.#tokens.set(tokenHash, { expiresAt, person });
  }

  async consumeLoginToken(tokenHash: string, now: number): Promise<boolean> {
    return (await this.claimLoginToken(tokenHash, now)) !== null;
  }

  async claimLoginToken(tokenHash: string, now: number): Promise<LoginGrant | null> {
    const token = this.#tokens.get(tokenHash);
    this.#tokens.delete(tokenHash);
    return token !== undefined && token.expiresAt > now ? { person: token.person } : null;
  }

  async addSession(cookieHash: string, session: StoredSession): Promise<void> {
    this.#sessions.set(cookieHash, session);
  }

  async findSession(cookieHash: string): Promise<StoredSession | null> {
    return this.#sessions.get(cookieHash) ?? null;
  }

  async touchSession(cookieHash: string, lastSeenAt: number): Promise<void> {
    const s = this.#sessions.get(cookieHash);
    if (s) this.#sessions.set(cookieHash, { ...s, lastSeenAt });
  }

  async deleteSession(cookieHash: string): Promise<void> {
    this.#sessions.delete(cookieHash);
  }

  async prune(now: number, idleBefore: number): Promise<void> {
    for (const [k, t] of this.#tokens) if (t.expiresAt <= now) this.#tokens.delete(k);
    for (const [k, s] of this.#sessions) {
      const ended = s.expiresAt != null && s.expiresAt <= now;
      if (ended || s.lastSeenAt < idleBefore) this.#sessions.delete(k);
    }
  }
}

/** The Set-Cookie value of a session: HttpOnly, SameSite=Strict, whole site, browser lifetime. */
export function sessionCookie(value: string, secure: boolean): string {
  return `${SESSION_COOKIE}=${value}; Path=/; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`;
}

/** Parses a Cookie header; the first occurrence of a name wins. */
export function parseCookies(header: string | undefined): Map<string, string> {
  const out = new Map<string, string>();
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const name = part.slice(0, eq).trim();
    if (name !== '' && !out.has(name)) out.set(name, part.slice(eq + 1).trim());
  }
  return out;
}
