/**
 * The servers and requests of the console forwarding tests (forward.test.ts,
 * forward-unavailable.test.ts): a "leader" (our HttpServer, accepting the forward key), a
 * "standby" whose `/` is the ConsoleForwarder, and requests with full control of their headers.
 */
import http, { type IncomingMessage } from 'node:http';
import { ConsoleForwarder, isForwardedWith, type LeaderNow } from '../../src/http/forward.ts';
import { readBody, sendJson, sendText } from '../../src/http/respond.ts';
import { HttpServer } from '../../src/http/server.ts';
import { memoryLog } from '../bridges/web/support.ts';
import { slow } from '../support/slowdown.ts';

/** The forward key of the test leader (what the standbys send it). */
export const KEY = 'forward-key-of-the-test-leader';
/** Closes what a test started; each test file runs them after each test. */
export const cleanups: (() => Promise<void> | void)[] = [];

/** What a request looked like when it reached the leader. */
export interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/**
 * The leader: `/echo` says what it got, `/stream` streams until released, `/upload` answers on the
 * first chunk.
 */
export async function startLeader() {
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
export async function startStandby(
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

/** A response as `ask` read it, body and all. */
export interface Answer {
  status: number;
  headers: IncomingMessage['headers'];
  body: string;
}

/** One request with full control of its headers (fetch may not set Host or Connection). */
export function ask(
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
export function firstChunk(res: IncomingMessage): Promise<string> {
  return new Promise((resolve) => res.once('data', (c: Buffer) => resolve(c.toString())));
}

/** Sends a request and resolves with its response (the body not yet read). */
export function open(req: http.ClientRequest): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    req.once('response', (res) => {
      // A cut stream errors; the tests that care listen themselves.
      res.on('error', () => {});
      resolve(res);
    });
    req.on('error', reject);
  });
}
