/**
 * The fake Slack's HTTP side: Web API calls at `/api/<method>` (bearer tokens, the failures and
 * hooks a test set for the next calls, a record of each), posts to `response_url`s, uploads to
 * upload URLs and downloads of private files.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FakeSlackWebApi } from './slack-api.ts';
import { ApiError, type Json, json, type RecordedCall, readParams } from './slack-wire.ts';

/** What the HTTP side reads and records on the fake. */
export interface SlackHttpHost {
  readonly calls: RecordedCall[];
  readonly responses: { id: string; body: Json }[];
  readonly refusedResponses: { id: string; status: number; body: string }[];
  readonly api: FakeSlackWebApi;
  readonly scopes: readonly string[];
  readonly botToken: string;
  readonly appToken: string;
  readonly origin: string;
}

/** Routes the fake's HTTP requests; tests queue failures and hooks for the next API calls. */
export class FakeSlackHttp {
  /** Calls to answer with an error or a 429, by method, first match first. */
  readonly failNext: { method: string; error?: string; retryAfter?: number }[] = [];
  /** Hooks run when a call of their method arrives, before Slack answers it. */
  readonly whenCalled: { method: string; run: () => void }[] = [];
  readonly #host: SlackHttpHost;

  constructor(host: SlackHttpHost) {
    this.#host = host;
  }

  /** Answers one request (the caller notifies the fake's waiters after). */
  async route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks);
    const path = new URL(req.url ?? '/', this.#host.origin).pathname;
    if (path.startsWith('/response/')) {
      this.#respond(path.slice('/response/'.length), raw, res);
    } else if (path.startsWith('/upload/')) {
      const body = uploadedBytes(raw, String(req.headers['content-type'] ?? ''));
      const known = this.#host.api.upload(path.slice('/upload/'.length), body);
      res.writeHead(known ? 200 : 404).end(`OK - ${raw.length}`);
    } else if (path.startsWith('/files-pri/')) {
      // Slack serves private files only with a token that can see them (Bearer, files:read).
      const file = this.#host.api.shared.get(path);
      const authorised = req.headers.authorization === `Bearer ${this.#host.botToken}`;
      if (file && authorised && this.#host.scopes.includes('files:read')) {
        this.#host.api.downloads.push(path);
        res.writeHead(200, { 'content-length': file.data.length }).end(file.data);
      } else res.writeHead(file ? 403 : 404).end();
    } else if (path.startsWith('/api/')) {
      this.#api(path.slice('/api/'.length), req, raw.toString(), res);
    } else {
      res.writeHead(404).end();
    }
  }

  /** A post to a response_url: refused once spent; `replace_original`/`delete_original` act. */
  #respond(id: string, raw: Buffer, res: ServerResponse): void {
    const answer = this.#host.api.interactions.useResponseUrl(id);
    if (answer.status !== 200) {
      this.#host.refusedResponses.push({ id, status: answer.status, body: answer.body });
      res.writeHead(answer.status).end(answer.body);
      return;
    }
    const body = JSON.parse(raw.toString()) as Json;
    try {
      if (answer.original) this.#host.api.respondTo(answer.original, body);
    } catch (err) {
      const error = err instanceof ApiError ? err.code : 'invalid_payload';
      this.#host.refusedResponses.push({ id, status: 400, body: error });
      res.writeHead(400).end(error);
      return;
    }
    this.#host.responses.push({ id, body });
    res.writeHead(200).end(answer.body);
  }

  #api(method: string, req: IncomingMessage, raw: string, res: ServerResponse): void {
    const params = readParams(raw, req.headers['content-type'] ?? '');
    const hook = this.whenCalled.findIndex((h) => h.method === method);
    if (hook >= 0) this.whenCalled.splice(hook, 1)[0]!.run();
    const record = (ok: boolean, error?: string) =>
      this.#host.calls.push({ method, params, ok, ...(error !== undefined && { error }) });
    const fail = this.failNext.findIndex((f) => f.method === method);
    if (fail >= 0) {
      const [f] = this.failNext.splice(fail, 1);
      record(false, f!.error ?? 'ratelimited');
      if (f!.retryAfter !== undefined) {
        res.writeHead(429, {
          'retry-after': String(f!.retryAfter),
          'content-type': 'application/json',
        });
        res.end(JSON.stringify({ ok: false, error: 'ratelimited' }));
      } else json(res, { ok: false, error: f!.error });
      return;
    }
    try {
      const expected =
        method === 'apps.connections.open' ? this.#host.appToken : this.#host.botToken;
      if (req.headers.authorization !== `Bearer ${expected}`) throw new ApiError('invalid_auth');
      const result = this.#host.api.call(method, params);
      record(true);
      json(res, { ok: true, ...result }, { 'x-oauth-scopes': this.#host.scopes.join(',') });
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      record(false, err.code);
      json(res, { ok: false, error: err.code });
    }
  }
}

/**
 * The file bytes of a POST to an upload URL: Slack takes the raw body or a multipart form (what
 * the SDK sends), whose first part with a filename is the file.
 */
function uploadedBytes(raw: Buffer, contentType: string): Buffer {
  const boundary = /boundary=(?:"([^"]+)"|([^;]+))/.exec(contentType);
  if (!contentType.startsWith('multipart/form-data') || !boundary) return raw;
  const sep = Buffer.from(`--${boundary[1] ?? boundary[2]}`);
  let at = raw.indexOf(sep);
  while (at >= 0) {
    const next = raw.indexOf(sep, at + sep.length);
    if (next < 0) break;
    const part = raw.subarray(at + sep.length + 2, next - 2); // after CRLF, before CRLF
    const headEnd = part.indexOf('\r\n\r\n');
    if (headEnd >= 0 && /filename=/.test(part.subarray(0, headEnd).toString())) {
      return part.subarray(headEnd + 4);
    }
    at = next;
  }
  return raw;
}
