/** Login tokens, sessions and CSRF tokens in a real bridge.db, with a controlled clock. */
import type { IncomingMessage } from 'node:http';
import { beforeEach, describe, expect, it } from 'vitest';
import { originAllowed } from '../../../src/bridges/web/guard.ts';
import {
  parseCookies,
  SessionStore,
  secretDigest,
  sessionCookie,
} from '../../../src/bridges/web/session.ts';
import { openTestDb, type TestDb } from '../../db/helpers.ts';

describe('sessions', () => {
  let t: TestDb;
  beforeEach(async () => {
    t = await openTestDb();
    return () => t.cleanup();
  });

  it('a login token is single use, expires, and only its digest is stored', async () => {
    let now = 1_000;
    const store = new SessionStore(t.repos.consoleAuth, {
      loginTokenTtlMs: 60_000,
      now: () => now,
    });
    const a = await store.createLoginToken();
    const b = await store.createLoginToken();
    expect(a).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const stored = JSON.stringify(t.db.sqlite.prepare('select * from console_login_tokens').all());
    expect(stored).not.toContain(a);
    expect(stored).toContain(secretDigest(a));
    expect(await store.consumeLoginToken(a)).toBe(true);
    expect(await store.consumeLoginToken(a)).toBe(false);
    expect(await store.consumeLoginToken(`${b}x`)).toBe(false);
    now += 60_001;
    expect(await store.consumeLoginToken(b)).toBe(false);
  });

  it('a session is found by its cookie, refreshed on use, and dropped when idle', async () => {
    let now = 0;
    const store = new SessionStore(t.repos.consoleAuth, { sessionIdleMs: 1000, now: () => now });
    const { session, cookieValue } = await store.createSession();
    const header = `other=1; pb_session=${cookieValue}`;
    now = 900;
    expect(await store.fromCookieHeader(header)).toEqual({ ...session, lastSeenAt: 900 });
    now = 1800; // 900 ms after the last use: still alive
    expect((await store.fromCookieHeader(header))?.id).toBe(session.id);
    now = 2801;
    expect(await store.fromCookieHeader(header)).toBeUndefined();
    expect(t.db.sqlite.prepare('select * from console_sessions').all()).toEqual([]);
    expect(await store.fromCookieHeader(undefined)).toBeUndefined();
  });

  it('a session outlives the process: a new store on the same bridge.db knows it and its CSRF token', async () => {
    const before = new SessionStore(t.repos.consoleAuth);
    const { session, cookieValue } = await before.createSession();
    const after = new SessionStore(t.repos.consoleAuth);
    const again = await after.fromCookieHeader(`pb_session=${cookieValue}`);
    expect(again?.id).toBe(session.id);
    expect(after.checkCsrf(again!, session.csrfToken)).toBe(true);
    const stored = JSON.stringify(t.db.sqlite.prepare('select * from console_sessions').all());
    expect(stored).not.toContain(cookieValue);
    expect(stored).not.toContain(session.csrfToken);
  });

  it('checks the CSRF token of the session only', async () => {
    const store = new SessionStore(t.repos.consoleAuth);
    const one = (await store.createSession()).session;
    const two = (await store.createSession()).session;
    expect(store.checkCsrf(one, one.csrfToken)).toBe(true);
    expect(store.checkCsrf(one, two.csrfToken)).toBe(false);
    expect(store.checkCsrf(one, undefined)).toBe(false);
    expect(store.checkCsrf(one, '')).toBe(false);
  });

  it('writes and reads cookies', () => {
    expect(sessionCookie('v', false)).toBe('pb_session=v; Path=/; HttpOnly; SameSite=Strict');
    expect(sessionCookie('v', true)).toMatch(/; Secure$/);
    expect(parseCookies('a=1; b = 2;c=3=4; a=5')).toEqual(
      new Map([
        ['a', '1'],
        ['b', '2'],
        ['c', '3=4'],
      ]),
    );
  });
});

describe('origin check', () => {
  const req = (headers: Record<string, string>) => ({ headers }) as unknown as IncomingMessage;
  it('accepts the same host, allowed origins and header-less clients; refuses the rest', () => {
    const host = { host: '127.0.0.1:7717' };
    expect(originAllowed(req({ ...host, origin: 'http://127.0.0.1:7717' }), [])).toBe(true);
    expect(originAllowed(req({ ...host, origin: 'http://localhost:7717' }), [])).toBe(false);
    expect(
      originAllowed(req({ ...host, origin: 'https://pb.example' }), ['https://pb.example']),
    ).toBe(true);
    expect(originAllowed(req({ ...host, origin: 'null' }), [])).toBe(false);
    expect(originAllowed(req(host), [])).toBe(true);
    expect(originAllowed(req({ ...host, 'sec-fetch-site': 'cross-site' }), [])).toBe(false);
    expect(originAllowed(req({ ...host, 'sec-fetch-site': 'same-origin' }), [])).toBe(true);
  });
});
