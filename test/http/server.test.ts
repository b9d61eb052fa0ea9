/** The HTTP server: prefix routing, error answers, the non-loopback warning, graceful close. */
import { afterEach, describe, expect, it } from 'vitest';
import { InvalidInputError, NotFoundError } from '../../src/errors.ts';
import {
  HttpServer,
  isLoopbackHost,
  matchRoute,
  type Route,
  underPrefix,
} from '../../src/http/server.ts';
import { memoryLog } from '../bridges/web/support.ts';

let server: HttpServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const named = (prefix: string): Route => ({
  prefix,
  handler: (_req, res) => {
    res.end(prefix);
  },
});

describe('routing', () => {
  it('matches a prefix at a path-segment boundary, longest prefix first', () => {
    expect(underPrefix('/telegram/webhook', '/telegram/webhook')).toBe(true);
    expect(underPrefix('/telegram/webhook/x', '/telegram/webhook')).toBe(true);
    expect(underPrefix('/telegram/webhookx', '/telegram/webhook')).toBe(false);
    expect(underPrefix('/slack/events', '/slack/')).toBe(true);
    expect(underPrefix('/slack', '/slack/')).toBe(true);
    expect(underPrefix('/slackx', '/slack/')).toBe(false);
    const routes = ['/', '/slack/', '/slack/events'].map(named);
    expect(matchRoute(routes, '/slack/events')?.prefix).toBe('/slack/events');
    expect(matchRoute(routes, '/slack/interactions')?.prefix).toBe('/slack/');
    expect(matchRoute(routes, '/runs')?.prefix).toBe('/');
    expect(matchRoute(['/healthz'].map(named), '/other')).toBeUndefined();
  });

  it('serves mounted routes over real HTTP and answers 404 elsewhere', async () => {
    server = await HttpServer.start({
      host: '127.0.0.1',
      port: 0,
      log: memoryLog(),
      routes: [named('/telegram/webhook')],
    });
    server.mount(named('/slack/'));
    expect(await (await fetch(`${server.url}/telegram/webhook`)).text()).toBe('/telegram/webhook');
    expect(await (await fetch(`${server.url}/slack/events`)).text()).toBe('/slack/');
    expect((await fetch(`${server.url}/nothing`)).status).toBe(404);
    expect(() => server!.mount(named('/slack/'))).toThrow(/already mounted/);
  });

  it('answers a failing handler with its error status, or 500 without details', async () => {
    const log = memoryLog();
    server = await HttpServer.start({
      host: '127.0.0.1',
      port: 0,
      log,
      routes: [
        { prefix: '/bad', handler: () => Promise.reject(new InvalidInputError('bad field x')) },
        { prefix: '/gone', handler: () => Promise.reject(new NotFoundError('no such run')) },
        {
          prefix: '/boom',
          handler: () => {
            throw new Error('db password is hunter2');
          },
        },
      ],
    });
    const bad = await fetch(`${server.url}/bad`);
    expect([bad.status, await bad.text()]).toEqual([400, 'bad field x\n']);
    expect((await fetch(`${server.url}/gone`)).status).toBe(404);
    const boom = await fetch(`${server.url}/boom?token=secret-token`);
    expect([boom.status, await boom.text()]).toEqual([500, 'internal error\n']);
    const logged = log.lines.find((l) => l.msg === 'http: handler failed');
    expect(logged?.obj).toMatchObject({ path: '/boom' });
    expect(JSON.stringify(log.lines)).not.toContain('secret-token');
  });
});

describe('binding', () => {
  it('knows loopback addresses', () => {
    for (const h of ['127.0.0.1', '127.1.2.3', 'localhost', '::1', '[::1]']) {
      expect(isLoopbackHost(h), h).toBe(true);
    }
    for (const h of ['0.0.0.0', '::', '192.168.1.5', 'example.com']) {
      expect(isLoopbackHost(h), h).toBe(false);
    }
  });

  it('warns when bound to a non-loopback address, not on 127.0.0.1', async () => {
    const quiet = memoryLog();
    server = await HttpServer.start({ host: '127.0.0.1', port: 0, log: quiet });
    expect(quiet.lines.filter((l) => l.level === 'warn')).toEqual([]);
    await server.close();
    const loud = memoryLog();
    server = await HttpServer.start({ host: '0.0.0.0', port: 0, log: loud });
    expect(loud.lines.filter((l) => l.level === 'warn')[0]?.msg).toMatch(/non-loopback/);
  });

  it('reports a port in use as a rejected start', async () => {
    server = await HttpServer.start({ host: '127.0.0.1', port: 0, log: memoryLog() });
    await expect(
      HttpServer.start({ host: '127.0.0.1', port: server.port, log: memoryLog() }),
    ).rejects.toMatchObject({ code: 'EADDRINUSE' });
  });
});

describe('close', () => {
  it('ends long-lived streams through onClose and resolves', async () => {
    const open = new Set<import('node:http').ServerResponse>();
    server = await HttpServer.start({
      host: '127.0.0.1',
      port: 0,
      log: memoryLog(),
      routes: [
        {
          prefix: '/events',
          handler: (_req, res) => {
            res.writeHead(200, { 'content-type': 'text/event-stream' });
            res.write(': hi\n\n');
            open.add(res);
          },
          onClose: () => {
            for (const r of open) r.end();
          },
        },
      ],
    });
    const res = await fetch(`${server.url}/events`);
    const reader = res.body!.getReader();
    await reader.read();
    await server.close();
    // The stream ended cleanly (done), it was not left hanging.
    let done = false;
    while (!done) done = (await reader.read()).done;
    expect(done).toBe(true);
    await expect(fetch(`${server.url}/events`)).rejects.toThrow();
  });

  it('cuts a stream that no route ends once the grace period is over', async () => {
    server = await HttpServer.start({
      host: '127.0.0.1',
      port: 0,
      log: memoryLog(),
      closeGraceMs: 50,
      routes: [
        {
          prefix: '/hang',
          handler: (_req, res) => {
            res.writeHead(200);
            res.write('x');
          },
        },
      ],
    });
    const res = await fetch(`${server.url}/hang`);
    const reader = res.body!.getReader();
    await reader.read();
    await server.close();
    await expect(
      (async () => {
        for (;;) if ((await reader.read()).done) return;
      })(),
    ).rejects.toThrow();
  });
});
