/**
 * Bolt plumbing for HTTP mode: a Bolt `Receiver` whose request handler is mounted by the shared
 * HTTP server (any path under its prefix: events, commands and interactivity are told apart by
 * their body). Every request is verified here, before Bolt sees it (signature AND a symmetric
 * timestamp window, see verify.ts); a refused request gets 401 and reaches no listener.
 * Also the adapter from Bolt's logger interface to the channel's logger.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { App, Logger, Receiver } from '@slack/bolt';
import { LogLevel } from '@slack/bolt';
import type { ChannelLogger } from '../channel.ts';
import { SIGNATURE_HEADER, TIMESTAMP_HEADER, verifySlackRequest } from './verify.ts';

/** Slack's payloads are small; anything bigger is not from Slack. */
const MAX_BODY_BYTES = 1024 * 1024;

/** Options of SlackHttpReceiver. */
export interface SlackHttpReceiverOptions {
  readonly signingSecret: string;
  readonly now: () => number;
  readonly log: ChannelLogger;
}

/** Reads the raw body, or undefined when it exceeds `limit` bytes. */
async function readBody(req: IncomingMessage, limit: number): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) return undefined;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/** Slash commands are plain forms, interactions a form with one `payload` JSON, events JSON. */
function parseBody(raw: Buffer, contentType: string | undefined): Record<string, unknown> {
  const text = raw.toString('utf8');
  if ((contentType ?? '').startsWith('application/x-www-form-urlencoded')) {
    const form = new URLSearchParams(text);
    const payload = form.get('payload');
    return payload === null
      ? Object.fromEntries(form)
      : (JSON.parse(payload) as Record<string, unknown>);
  }
  const parsed: unknown = JSON.parse(text);
  if (typeof parsed !== 'object' || parsed === null) throw new SyntaxError('not a JSON object');
  return parsed as Record<string, unknown>;
}

function respond(res: ServerResponse, body: unknown): void {
  if (body === undefined || body === '') res.writeHead(200).end();
  else if (typeof body === 'string') res.writeHead(200, { 'content-type': 'text/plain' }).end(body);
  else res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

const header = (req: IncomingMessage, name: string): string | undefined => {
  const v = req.headers[name];
  return typeof v === 'string' ? v : undefined;
};

/** The HTTP-mode receiver; `handle` answers one POST. */
export class SlackHttpReceiver implements Receiver {
  readonly #options: SlackHttpReceiverOptions;
  #app: App | undefined;

  /** Keeps the options; Bolt calls `init` with the app. */
  constructor(options: SlackHttpReceiverOptions) {
    this.#options = options;
  }

  /** Called by Bolt's App constructor. */
  init(app: App): void {
    this.#app = app;
  }

  /** Nothing to start: the shared HTTP server owns the socket. */
  start(): Promise<void> {
    return Promise.resolve();
  }

  /** Nothing to stop (see start). */
  stop(): Promise<void> {
    return Promise.resolve();
  }

  /**
   * Verifies, parses and hands one request to Bolt. The response is written when a listener
   * acks (before it does its long work); a request no listener acks gets 404, as Bolt does.
   */
  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const { log, signingSecret, now } = this.#options;
    const raw = await readBody(req, MAX_BODY_BYTES);
    if (raw === undefined) {
      res.writeHead(413).end();
      return;
    }
    const verdict = verifySlackRequest({
      signingSecret,
      timestamp: req.headers[TIMESTAMP_HEADER],
      signature: req.headers[SIGNATURE_HEADER],
      rawBody: raw,
      nowMs: now(),
    });
    if (!verdict.ok) {
      log.warn({ reason: verdict.reason }, 'slack: refused an unverified request');
      res.writeHead(401).end();
      return;
    }
    let body: Record<string, unknown>;
    try {
      body = parseBody(raw, header(req, 'content-type'));
    } catch {
      res.writeHead(400).end();
      return;
    }
    if (body.type === 'url_verification') {
      respond(res, { challenge: body.challenge });
      return;
    }
    if (body.ssl_check !== undefined || !this.#app) {
      res.writeHead(body.ssl_check !== undefined ? 200 : 503).end();
      return;
    }
    await this.#dispatch(this.#app, body, req, res);
  }

  async #dispatch(
    app: App,
    body: Record<string, unknown>,
    req: IncomingMessage,
    res: ServerResponse,
  ): Promise<void> {
    let acked = false;
    // biome-ignore lint/suspicious/noExplicitAny: Bolt's AckFn takes any response body
    const ack = async (response?: any): Promise<void> => {
      if (acked) throw new Error('slack: ack() called twice');
      acked = true;
      respond(res, response);
    };
    const retry = header(req, 'x-slack-retry-num');
    const retryReason = header(req, 'x-slack-retry-reason');
    try {
      await app.processEvent({
        body,
        ack,
        ...(retry !== undefined && { retryNum: Number.parseInt(retry, 10) }),
        ...(retryReason !== undefined && { retryReason }),
      });
    } catch (err) {
      this.#options.log.error({ err }, 'slack: processing a request failed');
      if (!res.headersSent) res.writeHead(500).end();
    }
    if (!acked && !res.headersSent) res.writeHead(404).end();
  }
}

const LEVELS: readonly LogLevel[] = [LogLevel.DEBUG, LogLevel.INFO, LogLevel.WARN, LogLevel.ERROR];

/** Bolt's (and the WebClient's) logger, forwarding to the channel's logger at or above a level. */
export function boltLogger(log: ChannelLogger): Logger {
  let level = LogLevel.INFO;
  const at =
    (l: LogLevel, write: (obj: object, msg?: string) => void) =>
    (...parts: unknown[]) => {
      if (LEVELS.indexOf(l) < LEVELS.indexOf(level)) return;
      const text = parts.map((p) => (p instanceof Error ? p.message : String(p))).join(' ');
      write({ source: 'bolt' }, `slack: ${text}`);
    };
  return {
    debug: at(LogLevel.DEBUG, (o, m) => log.debug(o, m)),
    info: at(LogLevel.INFO, (o, m) => log.info(o, m)),
    warn: at(LogLevel.WARN, (o, m) => log.warn(o, m)),
    error: at(LogLevel.ERROR, (o, m) => log.error(o, m)),
    setLevel: (l: LogLevel) => {
      level = l;
    },
    getLevel: () => level,
    setName: () => {},
  };
}
