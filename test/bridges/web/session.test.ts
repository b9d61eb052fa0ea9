/** Login tokens, sessions and CSRF tokens in a real bridge.db, with a controlled clock. */
import type { IncomingMessage } from 'node:http';
import { beforeEach, describe, expect, it } from 'vitest';
import { originAllowed } from '../../../src/bridges/web/guard.ts';
import {
  issueLoginToken,
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

  it('a chat sign-in token opens a session of that person, which ends at its expiry', async () => {
    let now = 0;
    const store = new SessionStore(t.repos.consoleAuth, {
      sessionIdleMs: 10_000,
      personSessionTtlMs: 5_000,
      now: () => now,
    });
    const alice = {
      platform: 'telegram',
      id: '42',
      display: '@alice',
      chatRef: 'telegram:-100',
    };
    const token = await issueLoginToken(t.repos.consoleAuth, 60_000, now, alice);
    const grant = await store.claimLoginToken(token);
    expect(grant).toEqual({ person: alice });
    expect(await store.claimLoginToken(token)).toBeNull();
    const { cookieValue } = await store.createSession(grant!.person);
    const header = `pb_session=${cookieValue}`;
    now = 4_000; // used all along: the person's session still ends at 5 s
    expect((await store.fromCookieHeader(header))?.person).toEqual(alice);
    now = 5_000;
    expect(await store.fromCookieHeader(header)).toBeUndefined();
    // The local admin's link signs in no person and never hits that expiry.
    const admin = await store.claimLoginToken(await store.createLoginToken());
    expect(admin).toEqual({ person: null });
  });

  it('lists sessions with their person and revokes one by its public id', async () => {
    const store = new SessionStore(t.repos.consoleAuth);
    const bob = { platform: 'slack', id: 'U1', display: 'bob', chatRef: null };
    const a = await store.createSession();
    const b = await store.createSession(bob);
    const listed = await t.repos.consoleAuth.listSessions();
    expect(listed.map((s) => [s.sessionId, s.person ?? null]).sort()).toEqual(
      [
        [a.session.id, null],
        [b.session.id, bob],
      ].sort(),
    );
    expect(await t.repos.consoleAuth.revokeSession(b.session.id)).toBe(true);
    expect(await t.repos.consoleAuth.revokeSession(b.session.id)).toBe(false);
    expect(await store.fromCookieHeader(`pb_session=${b.cookieValue}`)).toBeUndefined();
    expect((await store.fromCookieHeader(`pb_session=${a.cookieValue}`))?.id).toBe(a.session.id);
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

  it('names sessions with ids a shell passes as an argument (`phasebridge logins revoke <id>`)', async () => {
    const store = new SessionStore(t.repos.consoleAuth);
    // One base64url id in 64 began with '-': the CLI took it for an option and exited 2.
    for (let i = 0; i < 200; i++) {
      expect((await store.createSession()).session.id).toMatch(/^[0-9a-f]{18}$/);
    }
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
