/**
 * The one HTTP server of phasebridge (PHASEBRIDGE_HOST:PHASEBRIDGE_PORT). It knows no routes of
 * its own: adapters and operations code mount `{ prefix, handler }` routes, the longest matching
 * prefix answers. Bound to loopback by default; any other address is logged as a warning.
 */

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hostname, networkInterfaces } from 'node:os';
import { ConflictError, InvalidInputError } from '../errors.ts';
import { httpStatusOf, requestUrl, sendText } from './respond.ts';

/** Handles one request; a rejection becomes a 500 (or the error's status) if nothing was sent. */
export type RequestHandler = (req: IncomingMessage, res: ServerResponse) => void | Promise<void>;

/** A mounted handler: `/telegram/webhook` matches that path and below; `/` matches everything. */
export interface Route {
  readonly prefix: string;
  readonly handler: RequestHandler;
  /** Called first on close, e.g. to end server-sent-event streams so close() is not held up. */
  readonly onClose?: () => void | Promise<void>;
}

/** What the server logs; a pino logger fits. */
export interface HttpLogger {
  /** Optional: repeats of a known state go here when the logger has it. */
  debug?(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

/** Options of `HttpServer.start`. */
export interface HttpServerOptions {
  readonly host: string;
  /** 0 picks a free port (tests). */
  readonly port: number;
  readonly routes?: readonly Route[];
  readonly log: HttpLogger;
  /** How long close() lets open requests finish before cutting connections; default 5000 ms. */
  readonly closeGraceMs?: number;
  /** Host names served besides loopback names and `host` (the public URL's); others get 421. */
  readonly allowedHosts?: readonly string[];
  /**
   * True for a request a standby forwarded with this leader's key (http/forward.ts): its Host
   * names the standby, which checked it for its own address, so it is not checked again here.
   */
  readonly forwardedByStandby?: (req: IncomingMessage) => boolean;
}

/** Slow clients: headers must arrive, and a whole request be received, within this (ms). */
export const REQUEST_DEADLINE_MS = 10_000;

/** Paths served whatever the Host header (probes from a container or a load balancer). */
const ANY_HOST_PATHS = /^\/(healthz|readyz|livez|metrics)(\/|$)/;

/** This machine's host name and interface addresses (what a LAN client may put in Host). */
function ownAddresses(): string[] {
  const addresses = Object.values(networkInterfaces()).flatMap((list) =>
    (list ?? []).map((i) => i.address),
  );
  return [hostname(), ...addresses];
}

/** The host name of a Host header (port and IPv6 brackets removed, lower case). */
export function hostNameOf(header: string): string {
  const h = header.trim().toLowerCase();
  if (h.startsWith('[')) return h.slice(1, h.indexOf(']') === -1 ? undefined : h.indexOf(']'));
  return h.replace(/:\d*$/, '');
}

/** True for addresses only this machine can reach. */
export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase().replace(/^\[|\]$/g, '');
  return h === 'localhost' || h === '::1' || /^127(\.\d{1,3}){3}$/.test(h);
}

/** True when `pathname` falls under `prefix` (a path segment boundary, or a prefix ending in '/'). */
export function underPrefix(pathname: string, prefix: string): boolean {
  if (prefix.endsWith('/')) return pathname.startsWith(prefix) || `${pathname}/` === prefix;
  return pathname === prefix || pathname.startsWith(`${prefix}/`);
}

/** The route with the longest prefix covering `pathname`, if any. */
export function matchRoute(routes: readonly Route[], pathname: string): Route | undefined {
  let best: Route | undefined;
  for (const r of routes) {
    if (underPrefix(pathname, r.prefix) && (!best || r.prefix.length > best.prefix.length)) {
      best = r;
    }
  }
  return best;
}

/** A started server; mount routes before or after start. */
export class HttpServer {
  readonly #server: Server;
  readonly #routes: Route[] = [];
  readonly #log: HttpLogger;
  readonly #host: string;
  readonly #graceMs: number;
  readonly #hosts: ReadonlySet<string>;
  readonly #anyHost: boolean;
  readonly #forwarded: (req: IncomingMessage) => boolean;
  #closing: Promise<void> | undefined;
  #port = 0;

  private constructor(options: HttpServerOptions) {
    this.#log = options.log;
    this.#host = options.host;
    this.#graceMs = options.closeGraceMs ?? 5000;
    this.#forwarded = options.forwardedByStandby ?? (() => false);
    for (const r of options.routes ?? []) this.mount(r);
    // Bound to every address: this machine's own names and addresses are its hosts too.
    const bound =
      options.host === '0.0.0.0' || options.host === '::' ? ownAddresses() : [options.host];
    const wildcard = options.host === '0.0.0.0' || options.host === '::';
    this.#anyHost = wildcard && (options.allowedHosts ?? []).length === 0;
    this.#hosts = new Set([...bound, ...(options.allowedHosts ?? [])].map(hostNameOf));
    this.#server = createServer(
      {
        headersTimeout: REQUEST_DEADLINE_MS,
        requestTimeout: REQUEST_DEADLINE_MS,
        // Node checks the two deadlines this often (default 30 s: a slowloris lives that long).
        connectionsCheckingInterval: 1000,
      },
      (req, res) => void this.#dispatch(req, res),
    );
  }

  /** Listens on host:port; resolves once bound (rejects with the listen error, e.g. EADDRINUSE). */
  static async start(options: HttpServerOptions): Promise<HttpServer> {
    const s = new HttpServer(options);
    await new Promise<void>((resolve, reject) => {
      s.#server.once('error', reject);
      s.#server.listen(options.port, options.host, () => {
        s.#server.off('error', reject);
        s.#port = (s.#server.address() as AddressInfo).port;
        resolve();
      });
    });
    s.#server.on('error', (err) => s.#log.error({ err }, 'http: server error'));
    if (!isLoopbackHost(options.host)) {
      s.#log.warn(
        { host: options.host, port: s.port },
        'http: bound to a non-loopback address; the web console is reachable from the network (use TLS in front of it)',
      );
    }
    s.#log.info({ url: s.url }, 'http: listening');
    return s;
  }

  /** Adds a route; a second route with the same prefix is a ConflictError. */
  mount(route: Route): void {
    if (!route.prefix.startsWith('/')) {
      throw new InvalidInputError(`route prefix "${route.prefix}" must start with "/"`);
    }
    if (this.#routes.some((r) => r.prefix === route.prefix)) {
      throw new ConflictError(`a route is already mounted at ${route.prefix}`);
    }
    this.#routes.push(route);
  }

  /** The bound port (the real one when started with port 0). */
  get port(): number {
    return this.#port;
  }

  /** Base URL, e.g. `http://127.0.0.1:7717`. */
  get url(): string {
    const host = this.#host.includes(':') ? `[${this.#host}]` : this.#host;
    return `http://${host}:${this.port}`;
  }

  /**
   * Stops accepting, lets routes end their long-lived streams, lets open requests finish, and
   * cuts whatever is still open after the grace period. Safe to call twice.
   */
  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    const done = new Promise<void>((resolve) => this.#server.close(() => resolve()));
    await Promise.allSettled(this.#routes.map(async (r) => r.onClose?.()));
    this.#server.closeIdleConnections();
    const timer = setTimeout(() => this.#server.closeAllConnections(), this.#graceMs);
    timer.unref();
    await done;
    clearTimeout(timer);
  }

  /** True when the request's Host is one this server answers to (DNS rebinding defence). */
  #hostAllowed(req: IncomingMessage): boolean {
    // Bound to every address with no public URL: the operator opened it to any name.
    if (this.#anyHost || this.#forwarded(req)) return true;
    const name = hostNameOf(req.headers.host ?? '');
    return isLoopbackHost(name) || this.#hosts.has(name);
  }

  async #dispatch(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = requestUrl(req).pathname;
    if (!ANY_HOST_PATHS.test(path) && !this.#hostAllowed(req)) {
      sendText(res, 421, 'misdirected request: this server does not answer to that Host\n', {
        connection: 'close',
      });
      return;
    }
    const route = matchRoute(this.#routes, path);
    if (!route) {
      sendText(res, 404, 'not found\n');
      return;
    }
    try {
      await route.handler(req, res);
    } catch (err) {
      const status = httpStatusOf(err);
      // The path only: a query string may hold a login token.
      if (status >= 500) this.#log.error({ err, path }, 'http: handler failed');
      if (!res.headersSent) {
        // A refused body is not read further: the connection closes after the answer.
        const close = status === 413 ? { connection: 'close' } : undefined;
        sendText(
          res,
          status,
          status >= 500 ? 'internal error\n' : `${(err as Error).message}\n`,
          close,
        );
      } else {
        res.destroy();
      }
    }
  }
}
