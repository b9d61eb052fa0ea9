/**
 * A standby's console forwarding (issue 33), between real local HTTP servers: a "leader" (our
 * HttpServer, accepting the forward key) and a "standby" whose `/` is the ConsoleForwarder. What
 * reaches the leader (method, path, body, cookies, the browser's Host, X-Forwarded-*, no
 * hop-by-hop headers), what comes back (status, cookies), both bodies streamed, 503 with
 * Retry-After when no leader is known or it cannot be reached, 504 when it takes the request and
 * says nothing, a cut (not a clean end) when it dies mid-answer, and no forwarding loop. And
 * the standby's route: its own https rule first, so a loopback leader gains no plain-http client.
 */
import http, { type IncomingMessage } from 'node:http';
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { standbyConsoleRoute } from '../../src/app/standby-console.ts';
import { ConsoleForwarder, isForwardedWith, type LeaderNow } from '../../src/http/forward.ts';
import { readBody, sendJson, sendText } from '../../src/http/respond.ts';
import { HttpServer } from '../../src/http/server.ts';
import { memoryLog } from '../bridges/web/support.ts';
import { slow } from '../support/slowdown.ts';

const KEY = 'forward-key-of-the-test-leader';
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** What a request looked like when it reached the leader. */
interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/** The leader: `/echo` says what it got, `/stream` streams until released, `/upload` answers on the first chunk. */
async function startLeader() {
  const seen: Seen[] = [];
  let releaseStream: () => void = () => {};
  const streamReleased = new Promise<void>((r) => {
    releaseStream = r;
  });
  const streams: IncomingMessage[] = [];
  const server = await HttpServer.start({
    host: '127.0.0.1',
    port: 0,
    log: memoryLog(),
    closeGraceMs: 50,
    forwardedByStandby: (req) => isForwardedWith(req, KEY),
    routes: [
      {
        prefix: '/echo',
        handler: async (req, res) => {
          const body = (await readBody(req, 1 << 20)).toString();
          seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
          res.setHeader('set-cookie', ['pb_session=abc; HttpOnly; Path=/', 'other=1']);
          sendJson(res, 201, { got: body.length });
        },
      },
      {
        prefix: '/stream',
        handler: async (req, res) => {
          streams.push(req);
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          res.write('data: one\n\n');
          await streamReleased;
          res.end('data: two\n\n');
        },
      },
      {
        prefix: '/upload',
        handler: (req, res) => {
          // Answers on the first chunk: only a forwarder that streams the body lets it arrive.
          req.once('data', (chunk: Buffer) => {
            res.writeHead(200, { 'content-type': 'text/plain' });
            res.write(`first ${chunk.toString()}\n`);
            let rest = '';
            req.on('data', (c: Buffer) => {
              rest += c.toString();
            });
            req.on('end', () => res.end(`rest ${rest}\n`));
          });
        },
      },
    ],
  });
  cleanups.push(() => server.close());
  return { server, url: server.url, seen, releaseStream, streams };
}

/** A standby forwarding to whatever `leader()` says, answering /healthz itself. */
async function startStandby(
  leader: () => LeaderNow | undefined,
  opts: { trustForwardedProto?: boolean; secureCookies?: boolean; answerTimeoutMs?: number } = {},
) {
  const log = memoryLog();
  const forwarder = new ConsoleForwarder({
    leader: async () => leader(),
    log,
    connectTimeoutMs: slow(2_000),
    ...opts,
  });
  const server = await HttpServer.start({
    host: '127.0.0.1',
    port: 0,
    log: memoryLog(),
    closeGraceMs: 50,
    allowedHosts: ['standby.example'],
    routes: [
      { prefix: '/healthz', handler: (_q, s) => sendText(s, 200, 'standby ok\n') },
      { prefix: '/', handler: forwarder.handle, onClose: () => forwarder.closeAll() },
    ],
  });
  cleanups.push(() => server.close());
  return { server, port: server.port, log };
}

interface Answer {
  status: number;
  headers: IncomingMessage['headers'];
  body: string;
}

/** One request with full control of its headers (fetch may not set Host or Connection). */
function ask(
  port: number,
  o: { method?: string; path: string; headers?: Record<string, string>; body?: string },
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port, method: o.method ?? 'GET', path: o.path, headers: o.headers },
      (res) => {
        let body = '';
        res.on('data', (c: Buffer) => {
          body += c.toString();
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(o.body);
  });
}

/** Resolves with the first chunk of `res`'s body. */
function firstChunk(res: IncomingMessage): Promise<string> {
  return new Promise((resolve) => res.once('data', (c: Buffer) => resolve(c.toString())));
}

/** Sends a request and resolves with its response (the body not yet read). */
function open(req: http.ClientRequest): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    req.once('response', (res) => {
      // A cut stream errors; the tests that care listen themselves.
      res.on('error', () => {});
      resolve(res);
    });
    req.on('error', reject);
  });
}

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

  it('answers 503 with Retry-After, as JSON, a page or an event stream, while no leader is known', async () => {
    let leader: LeaderNow | undefined;
    const standby = await startStandby(() => leader);
    const json = await ask(standby.port, {
      path: '/runs',
      headers: { accept: 'application/json' },
    });
    expect(json.status).toBe(503);
    expect(json.headers['retry-after']).toBe('2');
    expect(JSON.parse(json.body).error).toMatch(/^No leader yet\. .*retry in a few seconds/);

    const page = await ask(standby.port, { path: '/', headers: { accept: 'text/html' } });
    expect(page.status).toBe(503);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.body).toContain('Retry in a few seconds');
    expect(page.body).toContain('http-equiv="refresh"');

    // EventSource gives up on an error status; told to retry, it reconnects by itself.
    const events = await ask(standby.port, {
      path: '/events',
      headers: { accept: 'text/event-stream' },
    });
    expect(events.status).toBe(200);
    expect(events.body).toMatch(/^retry: 2000$/m);

    // Elected but not serving its console yet (it advertises once it does).
    leader = { holder: 'host/1/ab' };
    const starting = await ask(standby.port, { path: '/' });
    expect(starting.status).toBe(503);
    expect(JSON.parse(starting.body).error).toContain('host/1/ab is not serving its console yet');
    // The standby's own paths never depend on the leader.
    expect((await ask(standby.port, { path: '/healthz' })).body).toBe('standby ok\n');
  });

  it('answers 503 when the leader cannot be reached, 504 when it takes the request and says nothing', async () => {
    const gone = await startLeader();
    const goneUrl = gone.url;
    await gone.server.close();
    const standby = await startStandby(() => ({ holder: 'dead/1/aa', url: goneUrl, key: KEY }));
    const posted = await ask(standby.port, {
      method: 'POST',
      path: '/api/command',
      headers: { 'content-type': 'application/json' },
      body: '{"text":"runs"}',
    });
    expect(posted.status).toBe(503);
    expect(posted.headers['retry-after']).toBe('2');
    expect(JSON.parse(posted.body).error).toContain('The leader dead/1/aa cannot be reached');
    // Logged once for the operator, with the address (not per request).
    await ask(standby.port, { path: '/' });
    const warned = standby.log.lines.filter((l) => l.level === 'warn');
    expect(warned).toHaveLength(1);
    expect(warned[0]!.obj).toEqual({ leader: goneUrl });

    // A leader that accepts connections and never answers (paused).
    // Reads the request (so it sees the standby hang up) and never answers.
    const silent = net.createServer((socket) => socket.resume());
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    cleanups.push(() => new Promise<void>((r) => silent.close(() => r())));
    const port = (silent.address() as net.AddressInfo).port;
    const paused = await startStandby(
      () => ({ holder: 'paused/1/bb', url: `http://127.0.0.1:${port}`, key: KEY }),
      { answerTimeoutMs: 300 },
    );
    const started = Date.now();
    const waited = await ask(paused.port, { path: '/', headers: { accept: 'application/json' } });
    expect(waited.status).toBe(504);
    expect(JSON.parse(waited.body).error).toContain('did not answer in time');
    expect(Date.now() - started).toBeLessThan(slow(5_000));
  });

  it('never forwards a forwarded request: two standbys that each think the other leads answer 503 at once', async () => {
    const leader = await startLeader();
    const urls: { a?: string; b?: string } = {};
    const a = await startStandby(() => ({ holder: 'b', url: urls.b!, key: KEY }));
    const b = await startStandby(() => ({ holder: 'a', url: urls.a!, key: KEY }));
    urls.a = a.server.url;
    urls.b = b.server.url;
    const answer = await ask(a.port, { path: '/echo', headers: { accept: 'application/json' } });
    expect(answer.status).toBe(503);
    expect(JSON.parse(answer.body).error).toContain('the leader just changed');
    // Sent straight to a standby with the header, it is not passed on either.
    const marked = await ask(b.port, {
      path: '/echo',
      headers: { 'x-phasebridge-forwarded': KEY, accept: 'application/json' },
    });
    expect(marked.status).toBe(503);
    expect(leader.seen).toHaveLength(0);
  });

  it('ends forwarded streams when the standby closes (it is about to lead)', async () => {
    const leader = await startLeader();
    const standby = await startStandby(() => ({ holder: 'a', url: leader.url, key: KEY }));
    const events = await open(http.get({ port: standby.port, host: '127.0.0.1', path: '/stream' }));
    await firstChunk(events);
    const finished = new Promise((r) => events.once('close', r));
    const leaderSide = new Promise((r) => leader.streams[0]!.once('close', r));
    await standby.server.close();
    await finished;
    await leaderSide;
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
