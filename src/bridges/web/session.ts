/**
 * Login and sessions of the web console. Like Jupyter, `phasebridge serve` prints a link with a
 * one-time login token; opening it sets an HttpOnly, SameSite=Strict session cookie. Tokens and
 * session cookies are kept only as SHA-256 digests, in memory: a restart logs everyone out.
 * Each session has its own CSRF token, sent back by the page with every state-changing request.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** Name of the session cookie. */
export const SESSION_COOKIE = 'pb_session';

/** A logged-in browser. `id` is public (routing, logs); the cookie value is the secret. */
export interface Session {
  readonly id: string;
  readonly csrfToken: string;
  readonly createdAt: number;
  lastSeenAt: number;
}

/** Options of `SessionStore`. */
export interface SessionStoreOptions {
  /** How long an unused login token stays valid; default 24 h. */
  readonly loginTokenTtlMs?: number;
  /** A session unused this long is dropped; default 12 h. */
  readonly sessionIdleMs?: number;
  readonly now?: () => number;
}

const digest = (secret: string): Buffer => createHash('sha256').update(secret, 'utf8').digest();
const randomToken = (): string => randomBytes(32).toString('base64url');

/** Constant-time equality of two strings (different lengths are simply unequal). */
export function safeEqual(a: string, b: string): boolean {
  const x = digest(a);
  const y = digest(b);
  return timingSafeEqual(x, y);
}

/** Login tokens and sessions of one console. */
export class SessionStore {
  readonly #tokens = new Map<Buffer, number>();
  readonly #sessions = new Map<string, Session>();
  readonly #tokenTtl: number;
  readonly #idle: number;
  readonly #now: () => number;

  constructor(options: SessionStoreOptions = {}) {
    this.#tokenTtl = options.loginTokenTtlMs ?? 24 * 3600_000;
    this.#idle = options.sessionIdleMs ?? 12 * 3600_000;
    this.#now = options.now ?? Date.now;
  }

  /** A new one-time login token (43 url-safe characters, 256 random bits). */
  createLoginToken(): string {
    const token = randomToken();
    this.#tokens.set(digest(token), this.#now() + this.#tokenTtl);
    return token;
  }

  /** True once for a valid token: the token is used up by this call. */
  consumeLoginToken(candidate: string): boolean {
    const d = digest(candidate);
    const now = this.#now();
    let found: Buffer | undefined;
    for (const [stored, expiresAt] of this.#tokens) {
      if (expiresAt <= now) this.#tokens.delete(stored);
      else if (timingSafeEqual(stored, d)) found = stored;
    }
    if (found === undefined) return false;
    this.#tokens.delete(found);
    return true;
  }

  /** Opens a session; returns it with the cookie value that names it. */
  createSession(): { session: Session; cookieValue: string } {
    const cookieValue = randomToken();
    const now = this.#now();
    const session: Session = {
      id: randomBytes(9).toString('base64url'),
      csrfToken: randomToken(),
      createdAt: now,
      lastSeenAt: now,
    };
    this.#sessions.set(digest(cookieValue).toString('hex'), session);
    return { session, cookieValue };
  }

  /** The live session named by a Cookie header, refreshing its idle timer; else undefined. */
  fromCookieHeader(header: string | undefined): Session | undefined {
    const value = parseCookies(header).get(SESSION_COOKIE);
    if (value === undefined) return undefined;
    // Looked up by digest, so the lookup's timing says nothing about the secret.
    const key = digest(value).toString('hex');
    const session = this.#sessions.get(key);
    if (!session) return undefined;
    const now = this.#now();
    if (now - session.lastSeenAt > this.#idle) {
      this.#sessions.delete(key);
      return undefined;
    }
    session.lastSeenAt = now;
    return session;
  }

  /** True when `candidate` is the session's CSRF token. */
  checkCsrf(session: Session, candidate: string | undefined): boolean {
    return candidate !== undefined && candidate !== '' && safeEqual(session.csrfToken, candidate);
  }

  /** Number of live sessions (for tests and diagnostics). */
  get size(): number {
    return this.#sessions.size;
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
