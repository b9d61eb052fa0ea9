/** Login tokens, sessions and CSRF tokens, with a controlled clock. */
import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { originAllowed } from '../../../src/bridges/web/guard.ts';
import { parseCookies, SessionStore, sessionCookie } from '../../../src/bridges/web/session.ts';

describe('sessions', () => {
  it('a login token is single use and expires', () => {
    let now = 1_000;
    const store = new SessionStore({ loginTokenTtlMs: 60_000, now: () => now });
    const a = store.createLoginToken();
    const b = store.createLoginToken();
    expect(a).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(store.consumeLoginToken(a)).toBe(true);
    expect(store.consumeLoginToken(a)).toBe(false);
    expect(store.consumeLoginToken(`${b}x`)).toBe(false);
    now += 60_001;
    expect(store.consumeLoginToken(b)).toBe(false);
  });

  it('a session is found by its cookie, refreshed on use, and dropped when idle', () => {
    let now = 0;
    const store = new SessionStore({ sessionIdleMs: 1000, now: () => now });
    const { session, cookieValue } = store.createSession();
    const header = `other=1; pb_session=${cookieValue}`;
    now = 900;
    expect(store.fromCookieHeader(header)).toBe(session);
    now = 1800; // 900 ms after the last use: still alive
    expect(store.fromCookieHeader(header)?.id).toBe(session.id);
    now = 2801;
    expect(store.fromCookieHeader(header)).toBeUndefined();
    expect(store.size).toBe(0);
    expect(store.fromCookieHeader(undefined)).toBeUndefined();
  });

  it('checks the CSRF token of the session only', () => {
    const store = new SessionStore();
    const one = store.createSession().session;
    const two = store.createSession().session;
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
