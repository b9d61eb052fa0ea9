/**
 * A standby's console forwarding (issue 33), between real local HTTP servers (forward-support.ts):
 * what reaches the leader (method, path, body, cookies, the browser's Host, X-Forwarded-*, no
 * hop-by-hop headers), what comes back (status, cookies), both bodies streamed, a cut (not a
 * clean end) when the leader dies mid-answer. And the standby's route: its own https rule first,
 * so a loopback leader gains no plain-http client. forward-unavailable.test.ts: no leader to
 * forward to.
 */
import http from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { standbyConsoleRoute } from '../../src/app/standby-console.ts';
import { HttpServer } from '../../src/http/server.ts';
import { memoryLog } from '../bridges/web/support.ts';
import {
  ask,
  cleanups,
  firstChunk,
  KEY,
  open,
  startLeader,
  startStandby,
} from './forward-support.ts';

afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('forwarding the console from a standby to the leader', () => {
  it('passes method, path, body, cookies and the browser Host on; adds X-Forwarded-*; drops hop-by-hop headers', async () => {
    const leader = await startLeader();
    const standby = await startStandby(() => ({ holder: 'a', url: leader.url, key: KEY }));
    const answer = await ask(standby.port, {
      method: 'POST',
      path: '/echo/x?y=1',
      headers: {
        host: 'standby.example',
        cookie: 'pb_session=s1',
        authorization: 'Bearer t0ken',
        'content-type': 'application/json',
        // Claimed by the client: this standby trusts no proxy, so it says http.
        'x-forwarded-proto': 'https',
        connection: 'keep-alive, x-hop',
        'x-hop': 'for this connection only',
        'proxy-authorization': 'Basic eA==',
      },
      body: '{"text":"run demo"}',
    });
    expect(answer.status).toBe(201);
    expect(JSON.parse(answer.body)).toEqual({ got: 19 });
    expect(answer.headers['set-cookie']).toEqual(['pb_session=abc; HttpOnly; Path=/', 'other=1']);

    const [got] = leader.seen;
    expect(got).toMatchObject({ method: 'POST', url: '/echo/x?y=1', body: '{"text":"run demo"}' });
    expect(got!.headers).toMatchObject({
      host: 'standby.example',
      cookie: 'pb_session=s1',
      authorization: 'Bearer t0ken',
      'x-forwarded-for': '127.0.0.1',
      'x-forwarded-proto': 'http',
      'x-forwarded-host': 'standby.example',
      'x-phasebridge-forwarded': KEY,
    });
    expect(got!.headers['x-hop']).toBeUndefined();
    expect(got!.headers['proxy-authorization']).toBeUndefined();

    // The leader itself refuses that Host from anyone without its key (DNS rebinding).
    const direct = (headers: Record<string, string>) =>
      ask(leader.server.port, { path: '/echo', headers: { host: 'standby.example', ...headers } });
    expect((await direct({})).status).toBe(421);
    expect((await direct({ 'x-phasebridge-forwarded': 'a-guess' })).status).toBe(421);
    expect(leader.seen).toHaveLength(1);
  });

  it('behind a trusted TLS proxy: passes its X-Forwarded-Proto on and makes the cookies Secure', async () => {
    const leader = await startLeader();
    const standby = await startStandby(() => ({ holder: 'a', url: leader.url, key: KEY }), {
      trustForwardedProto: true,
      secureCookies: true,
    });
    const answer = await ask(standby.port, {
      path: '/echo',
      headers: { 'x-forwarded-proto': 'https', 'x-forwarded-for': '203.0.113.7' },
    });
    expect(answer.headers['set-cookie']).toEqual([
      'pb_session=abc; HttpOnly; Path=/; Secure',
      'other=1; Secure',
    ]);
    expect(leader.seen[0]!.headers).toMatchObject({
      'x-forwarded-proto': 'https',
      'x-forwarded-for': '203.0.113.7, 127.0.0.1',
    });
  });

  it('streams the answer (an event stream) and the request body (an upload) as they come', async () => {
    const leader = await startLeader();
    const standby = await startStandby(() => ({ holder: 'a', url: leader.url, key: KEY }));

    // The first event arrives while the leader still holds the stream open.
    const events = await open(http.get({ port: standby.port, host: '127.0.0.1', path: '/stream' }));
    expect(events.headers['content-type']).toBe('text/event-stream');
    expect(await firstChunk(events)).toBe('data: one\n\n');
    let rest = '';
    events.on('data', (c: Buffer) => {
      rest += c.toString();
    });
    const ended = new Promise((r) => events.once('end', r));
    leader.releaseStream();
    await ended;
    expect(rest).toBe('data: two\n\n');

    // The leader answers the first chunk while the client still holds the rest back.
    const upload = http.request({
      port: standby.port,
      host: '127.0.0.1',
      method: 'POST',
      path: '/upload',
      headers: { 'content-type': 'application/octet-stream' },
    });
    upload.write('part-1');
    const answer = await open(upload);
    expect(await firstChunk(answer)).toBe('first part-1\n');
    let tail = '';
    answer.on('data', (c: Buffer) => {
      tail += c.toString();
    });
    const done = new Promise((r) => answer.once('end', r));
    upload.end('part-2');
    await done;
    expect(tail).toBe('rest part-2\n');
  });

  it('ends the leader side of a stream whose client went away', async () => {
    const leader = await startLeader();
    const standby = await startStandby(() => ({ holder: 'a', url: leader.url, key: KEY }));
    const req = http.get({ port: standby.port, host: '127.0.0.1', path: '/stream' });
    await firstChunk(await open(req));
    const atLeader = leader.streams[0]!;
    const closed = new Promise((r) => atLeader.once('close', r));
    req.destroy();
    await closed;
    leader.releaseStream();
  });

  it('cuts the client off (no clean end) when the leader dies mid-answer', async () => {
    const leader = await startLeader();
    const standby = await startStandby(() => ({ holder: 'a', url: leader.url, key: KEY }));
    const events = await open(http.get({ port: standby.port, host: '127.0.0.1', path: '/stream' }));
    await firstChunk(events);
    const outcome = new Promise<string>((resolve) => {
      events.once('end', () => resolve('ended'));
      events.on('error', () => resolve('cut'));
      events.on('aborted', () => resolve('cut'));
    });
    leader.streams[0]!.socket.destroy();
    expect(await outcome).toBe('cut');
    leader.releaseStream();
  });
});

describe("a standby's console route", () => {
  it('applies its own https rule first: beyond loopback, no plain-http request reaches a loopback leader', async () => {
    const leader = await startLeader();
    // Configured as a standby listening on every address behind a TLS proxy (bound to loopback
    // here: the rule follows the configuration, as on the bridge).
    const route = standbyConsoleRoute(
      { host: '0.0.0.0', trustProxy: 'x-forwarded-proto' },
      async () => ({ holder: 'a', url: leader.url, key: KEY }),
      memoryLog(),
    );
    const server = await HttpServer.start({
      host: '127.0.0.1',
      port: 0,
      log: memoryLog(),
      closeGraceMs: 50,
      routes: [route],
    });
    cleanups.push(() => server.close());

    const plain = await ask(server.port, { path: '/echo', headers: { accept: 'text/html' } });
    expect(plain.status).toBe(403);
    expect(plain.body).toContain('The console needs https');
    expect(leader.seen).toHaveLength(0);

    const overTls = await ask(server.port, {
      path: '/echo',
      headers: { 'x-forwarded-proto': 'https' },
    });
    expect(overTls.status).toBe(201);
    expect(leader.seen[0]!.headers['x-forwarded-proto']).toBe('https');
    // Its cookies cross a network: Secure, as the console's own would be there.
    expect(overTls.headers['set-cookie']).toEqual([
      'pb_session=abc; HttpOnly; Path=/; Secure',
      'other=1; Secure',
    ]);
  });
});
