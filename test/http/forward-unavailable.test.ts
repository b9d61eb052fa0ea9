/**
 * A standby's console forwarding (issue 33) when there is no leader to forward to, between real
 * local HTTP servers (forward-support.ts): 503 with Retry-After while no leader is known or it
 * cannot be reached, 504 when it takes the request and says nothing, no forwarding loop, and the
 * forwarded streams ended when the standby closes to lead.
 */
import http from 'node:http';
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { LeaderNow } from '../../src/http/forward.ts';
import { slow } from '../support/slowdown.ts';
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
