/**
 * A standby's console (issue 33): a request that is not the standby's own (/healthz, /readyz,
 * /metrics stay local) is forwarded to the leader at the address it advertised in the lease, so
 * a browser or a load balancer that reaches a standby works as if it reached the leader. Bodies
 * stream both ways (uploads, server-sent events); hop-by-hop headers are dropped and the
 * X-Forwarded-* headers added; the Host stays the browser's, so the leader's Origin check and
 * cookies see the address the browser used. The leader does its own auth (cookies and bearer
 * tokens pass through). A forwarded request carries the leader's forward key: the leader skips
 * only its Host check for it (the standby made that check for its own address), and a standby
 * never forwards a request that carries the header (no loops when the lease just moved).
 * Nothing else is trusted more for being forwarded: the leader reads no client address, and the
 * standby applies its own https rule first (serve-ha.ts), so a loopback-bound leader gains no
 * plain-http clients from the network through a standby.
 */
import { timingSafeEqual } from 'node:crypto';
import http, {
  type ClientRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  type ServerResponse,
} from 'node:http';
import https from 'node:https';
import { BASE_HEADERS, requestUrl, sendJson } from './respond.ts';
import type { HttpLogger } from './server.ts';

/** Header of a forwarded request: the leader's forward key. */
export const FORWARDED_HEADER = 'x-phasebridge-forwarded';

/** Seconds a client is told to wait before it tries again (Retry-After). */
const RETRY_AFTER_S = 2;

/**
 * Headers of one connection only (RFC 9110 7.6.1), never passed on; and `expect`, which this
 * standby's own server already answered (100 Continue).
 */
const HOP_BY_HOP = new Set([
  'connection',
  'expect',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/** The leader as the lease names it now. */
export interface LeaderNow {
  /** The lease holder's name (shown to clients while it cannot be reached). */
  readonly holder: string;
  /** Its console address; undefined while it has not advertised one under its token. */
  readonly url?: string | undefined;
  /** Its forward key, advertised with the address. */
  readonly key?: string | undefined;
}

/** Options of {@link ConsoleForwarder}. */
export interface ConsoleForwarderOptions {
  /** Who leads now (the lease); undefined when nobody does. */
  readonly leader: () => Promise<LeaderNow | undefined>;
  readonly log: HttpLogger;
  /** Longest wait for the TCP connection to the leader (default 2000 ms). */
  readonly connectTimeoutMs?: number;
  /** Longest wait for the leader's response headers once the request is sent (default 30 s). */
  readonly answerTimeoutMs?: number;
  /** Believe the client's X-Forwarded-Proto (a TLS proxy in front of this standby). */
  readonly trustForwardedProto?: boolean;
  /** Add `Secure` to the leader's cookies (this standby's console is reached over TLS). */
  readonly secureCookies?: boolean;
}

/** Why a forward failed before the leader answered. */
class ForwardFailure extends Error {
  constructor(
    readonly kind: 'connect' | 'answer',
    message: string,
  ) {
    super(message);
  }
}

/** True when `req` carries `key` in the forwarded header (compared in constant time). */
export function isForwardedWith(req: IncomingMessage, key: string | undefined): boolean {
  const got = req.headers[FORWARDED_HEADER];
  if (key === undefined || typeof got !== 'string') return false;
  const a = Buffer.from(got);
  const b = Buffer.from(key);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Forwards the console's requests from a standby to the leader. */
export class ConsoleForwarder {
  readonly #o: ConsoleForwarderOptions;
  readonly #open = new Set<ClientRequest>();
  #lastProblem = '';

  constructor(o: ConsoleForwarderOptions) {
    this.#o = o;
  }

  /** The route handler: forwards `req`, or answers 503 (retry soon) when it cannot. */
  readonly handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    // Forwarded to us, a standby: the lease moved since the sender looked. Never again.
    if (req.headers[FORWARDED_HEADER] !== undefined) {
      sendUnavailable(req, res, 503, 'This bridge does not lead (the leader just changed).');
      return;
    }
    const leader = await this.#o.leader();
    if (leader === undefined) {
      this.#problem('standby: no leader holds the lease; the console answers 503');
      sendUnavailable(req, res, 503, 'No leader yet.');
      return;
    }
    if (leader.url === undefined || leader.key === undefined) {
      this.#problem(
        `standby: the leader ${leader.holder} has not advertised its console address (starting, or PHASEBRIDGE_ADVERTISE_URL missing on it)`,
      );
      sendUnavailable(req, res, 503, `The leader ${leader.holder} is not serving its console yet.`);
      return;
    }
    const url = leader.url;
    const forwarded = await this.#forward(req, res, url, leader.key).then(
      () => true,
      (err: unknown) => {
        const f = err instanceof ForwardFailure ? err : new ForwardFailure('connect', String(err));
        this.#problem(`standby: forwarding to the leader failed (${f.message})`, url);
        if (res.headersSent) {
          res.destroy();
          return false;
        }
        // The rest of an unread body is not waited for: the connection closes after the answer.
        if (!req.complete) res.setHeader('connection', 'close');
        if (f.kind === 'answer') {
          sendUnavailable(req, res, 504, `The leader ${leader.holder} did not answer in time.`);
        } else {
          sendUnavailable(req, res, 503, `The leader ${leader.holder} cannot be reached.`);
        }
        return false;
      },
    );
    if (forwarded) this.#lastProblem = '';
  };

  /** Ends every forward in flight (the standby's server closes: this bridge leads now). */
  closeAll(): void {
    for (const up of this.#open) up.destroy();
    this.#open.clear();
  }

  /** Logs a problem when it differs from the last one (a dead leader is not logged per request). */
  #problem(what: string, url?: string): void {
    if (what === this.#lastProblem) return;
    this.#lastProblem = what;
    this.#o.log.warn(url === undefined ? {} : { leader: url }, what);
  }

  /** Resolves once the answer was streamed to the client; rejects if it could not be. */
  #forward(req: IncomingMessage, res: ServerResponse, url: string, key: string): Promise<void> {
    const base = new URL(url);
    const target = requestUrl(req);
    const client = base.protocol === 'https:' ? https : http;
    return new Promise<void>((resolve, reject) => {
      const up = client.request({
        protocol: base.protocol,
        hostname: base.hostname.replace(/^\[|\]$/g, ''),
        port: base.port === '' ? undefined : Number(base.port),
        method: req.method,
        // What this standby routed (the parsed path), so both agree on what is /metrics.
        path: `${target.pathname}${target.search}`,
        headers: forwardHeaders(req, key, this.#o.trustForwardedProto === true),
        // A fresh connection each time: a kept-alive one may lead to a leader that died.
        agent: false,
      });
      this.#open.add(up);
      let settled = false;
      const fail = (err: Error) => {
        if (settled) return;
        settled = true;
        clearTimeout(connectTimer);
        clearTimeout(answerTimer);
        reject(err);
      };
      const connectMs = this.#o.connectTimeoutMs ?? 2_000;
      const connectTimer = setTimeout(
        () => up.destroy(new ForwardFailure('connect', `no connection within ${connectMs} ms`)),
        connectMs,
      );
      const answerMs = this.#o.answerTimeoutMs ?? 30_000;
      let answerTimer: NodeJS.Timeout | undefined;
      // Counted from the whole request sent: a slow upload is the client's time, not the leader's.
      up.once('finish', () => {
        if (settled) return;
        answerTimer = setTimeout(
          () => up.destroy(new ForwardFailure('answer', `no answer within ${answerMs} ms`)),
          answerMs,
        );
      });
      up.once('socket', (socket) => {
        if (!socket.connecting) clearTimeout(connectTimer);
        else socket.once('connect', () => clearTimeout(connectTimer));
      });
      up.on('error', (err) =>
        fail(err instanceof ForwardFailure ? err : new ForwardFailure('connect', err.message)),
      );
      up.once('close', () => this.#open.delete(up));
      // The client went away (a closed tab ends its event stream): the leader's side ends too.
      res.once('close', () => {
        if (!res.writableFinished) up.destroy();
        if (!settled) {
          settled = true;
          clearTimeout(connectTimer);
          clearTimeout(answerTimer);
          resolve();
        }
      });
      up.once('response', (answer) => {
        clearTimeout(connectTimer);
        clearTimeout(answerTimer);
        settled = true;
        res.writeHead(
          answer.statusCode ?? 502,
          answer.statusMessage,
          answerHeaders(answer.headers, this.#o.secureCookies === true),
        );
        // Event streams: the client sees the headers now, not with the first event.
        res.flushHeaders();
        // A leader that dies mid-answer: its side errors; the client's is cut below.
        answer.on('error', () => res.destroy());
        answer.pipe(res);
        answer.once('close', () => {
          // Cut, not ended: the client must not take a truncated answer for a whole one.
          if (!answer.complete) res.destroy();
          resolve();
        });
      });
      req.pipe(up);
    });
  }
}

/** The request's headers as the leader gets them. */
function forwardHeaders(
  req: IncomingMessage,
  key: string,
  trustProto: boolean,
): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = withoutHopByHop(req.headers);
  const remote = req.socket.remoteAddress ?? 'unknown';
  const prior = req.headers['x-forwarded-for'];
  out['x-forwarded-for'] = prior === undefined ? remote : `${String(prior)}, ${remote}`;
  const proto = req.headers['x-forwarded-proto'];
  const claimed = (Array.isArray(proto) ? proto[0] : proto)?.split(',')[0]?.trim().toLowerCase();
  // This listener is plain http: only a trusted proxy in front of it may say https.
  out['x-forwarded-proto'] = trustProto && claimed !== undefined ? claimed : 'http';
  if (req.headers.host !== undefined) out['x-forwarded-host'] = req.headers.host;
  out[FORWARDED_HEADER] = key;
  return out;
}

/** The leader's answer headers as the client gets them. */
function answerHeaders(headers: IncomingHttpHeaders, secureCookies: boolean): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = withoutHopByHop(headers);
  const cookies = headers['set-cookie'];
  if (secureCookies && cookies !== undefined) {
    out['set-cookie'] = cookies.map((c) => (/;\s*secure\s*(;|$)/i.test(c) ? c : `${c}; Secure`));
  }
  return out;
}

/** `headers` without the hop-by-hop ones, nor those the Connection header names. */
function withoutHopByHop(headers: IncomingHttpHeaders): OutgoingHttpHeaders {
  const named = String(headers.connection ?? '')
    .split(',')
    .map((h) => h.trim().toLowerCase());
  const out: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || HOP_BY_HOP.has(name) || named.includes(name)) continue;
    out[name] = value;
  }
  return out;
}

/**
 * "Retry in a few seconds", as the client reads it: an event stream that asks to reconnect
 * after the wait and ends (EventSource gives up for good on an error status, and the page would
 * say "disconnected"), a page that reloads itself, or JSON; each with Retry-After.
 */
function sendUnavailable(
  req: IncomingMessage,
  res: ServerResponse,
  status: 503 | 504,
  why: string,
): void {
  const text = `${why} This bridge is a standby: retry in a few seconds.`;
  const retry = { 'retry-after': String(RETRY_AFTER_S) };
  const accept = req.headers.accept ?? '';
  if (req.method === 'GET' && accept.includes('text/event-stream')) {
    const body = `: ${text}\nretry: ${RETRY_AFTER_S * 1000}\n\n`;
    res.writeHead(200, {
      ...BASE_HEADERS,
      ...retry,
      'content-type': 'text/event-stream; charset=utf-8',
      'content-length': Buffer.byteLength(body),
    });
    res.end(body);
    return;
  }
  if (req.method === 'GET' && accept.includes('text/html')) {
    const page = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="${RETRY_AFTER_S}"><title>phasebridge: retry in a few seconds</title></head><body><h1>Retry in a few seconds</h1><p>${escapeText(text)}</p><p>This page reloads itself.</p></body></html>`;
    res.writeHead(status, {
      ...BASE_HEADERS,
      ...retry,
      'content-type': 'text/html; charset=utf-8',
      'content-security-policy': "default-src 'none'",
      'content-length': Buffer.byteLength(page),
    });
    res.end(page);
    return;
  }
  res.setHeader('retry-after', String(RETRY_AFTER_S));
  sendJson(res, status, { error: text, retryAfterSeconds: RETRY_AFTER_S });
}

function escapeText(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
