/**
 * The HTTP server's edges against hostile clients, on a real socket: a foreign Host (DNS
 * rebinding) gets 421, an oversized body gets 413 with a status, and a client trickling its
 * headers is cut off by the server's own deadline.
 */
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { readBody, sendText } from '../../src/http/respond.ts';
import { HttpServer, hostNameOf } from '../../src/http/server.ts';
import { memoryLog } from '../bridges/web/support.ts';

let server: HttpServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function start(allowedHosts: string[] = []): Promise<HttpServer> {
  server = await HttpServer.start({
    host: '127.0.0.1',
    port: 0,
    log: memoryLog(),
    allowedHosts,
    routes: [
      {
        prefix: '/form',
        handler: async (req, res) => {
          const body = await readBody(req, 1024);
          sendText(res, 200, `got ${body.length}\n`);
        },
      },
      { prefix: '/', handler: (_req, res) => sendText(res, 200, 'home\n') },
    ],
  });
  return server;
}

/** Sends raw bytes and resolves with what came back once the server closes (or after `ms`). */
function raw(port: number, text: string): Promise<string> {
  return new Promise((resolve) => {
    let got = '';
    const s = net.connect(port, '127.0.0.1', () => s.write(text));
    s.on('data', (d) => {
      got += d.toString();
    });
    s.on('error', () => resolve(got));
    s.on('close', () => resolve(got));
  });
}

describe('console edges', () => {
  it('answers 421 to a Host that is neither loopback nor the public URL', async () => {
    const s = await start(['bridge.example.org']);
    const ask = (host: string) =>
      raw(s.port, `GET / HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
    expect(await ask('evil.example')).toMatch(/^HTTP\/1.1 421 /);
    expect(await ask('127.0.0.1.evil.example:80')).toMatch(/^HTTP\/1.1 421 /);
    expect(await ask(`localhost:${s.port}`)).toMatch(/^HTTP\/1.1 200 /);
    expect(await ask(`127.0.0.1:${s.port}`)).toMatch(/^HTTP\/1.1 200 /);
    expect(await ask(`[::1]:${s.port}`)).toMatch(/^HTTP\/1.1 200 /);
    expect(await ask('bridge.example.org')).toMatch(/^HTTP\/1.1 200 /);
    expect(hostNameOf('[::1]:80')).toBe('::1');
  });

  it('answers 413 to a declared oversized body before reading it, and closes', async () => {
    const s = await start();
    const reply = await raw(
      s.port,
      `POST /form HTTP/1.1\r\nHost: localhost\r\nContent-Length: 50000000\r\n\r\n${'x'.repeat(4096)}`,
    );
    expect(reply).toMatch(/^HTTP\/1.1 413 /);
    expect(reply.toLowerCase()).toContain('connection: close');
  });

  it('answers 413 to a chunked body once it passes the limit, without a length to go by', async () => {
    const s = await start();
    const chunk = 'x'.repeat(600);
    const body = `${(600).toString(16)}\r\n${chunk}\r\n`.repeat(3); // 1800 bytes > 1024
    const reply = await raw(
      s.port,
      `POST /form HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n${body}0\r\n\r\n`,
    );
    expect(reply).toMatch(/^HTTP\/1.1 413 /);
    expect(reply.toLowerCase()).toContain('connection: close');
    // Within the limit the same framing is read whole.
    const small = await raw(
      s.port,
      `POST /form HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n${(600).toString(16)}\r\n${chunk}\r\n0\r\n\r\n`,
    );
    expect(small).toMatch(/^HTTP\/1.1 200 /);
    expect(small).toContain('got 600');
  });

  it('closes a connection whose headers trickle in (slowloris)', { timeout: 60_000 }, async () => {
    const s = await start();
    const reply = await new Promise<string>((resolve) => {
      let got = '';
      const sock = net.connect(s.port, '127.0.0.1', () => sock.write('GET / HTTP/1.1\r\n'));
      const drip = setInterval(() => sock.write('X-Slow: 1\r\n'), 500);
      sock.on('data', (d) => {
        got += d.toString();
      });
      sock.on('error', () => undefined);
      sock.on('close', () => {
        clearInterval(drip);
        resolve(got);
      });
    });
    // The server, not the client, ended it: with its timeout answer.
    expect(reply).toMatch(/^HTTP\/1.1 408 /);
  });
});
