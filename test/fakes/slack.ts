/**
 * A fake Slack speaking the real protocols: the Web API at `/api/<method>` (form or JSON bodies,
 * bearer tokens, Block Kit limits, injectable errors and 429s with Retry-After, a record of every
 * call), `response_url`s (5 posts in 30 minutes) and file uploads, and the app-facing side: signed
 * HTTP requests to the adapter's handler URL, or Socket Mode envelopes over a WebSocket
 * (`apps.connections.open`), each timed against Slack's 3 s ack deadline (slack-retries.ts).
 * Slack's own expiries run on `clock`, which a test can move forward.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { FakeSlackWebApi } from './slack-api.ts';
import { FakeClock } from './slack-clock.ts';
import { type Attempt, FakeSlackRetries, type RetryReason } from './slack-retries.ts';
import { FakeSocketMode } from './slack-socket.ts';
import {
  ApiError,
  blockActionsPayload,
  commandForm,
  type Delivery,
  type FakeUser,
  httpBody,
  type Json,
  json,
  mentionEnvelope,
  type RecordedCall,
  readParams,
  type SlackRequest,
  type StoredMessage,
  type StoredView,
  sign,
  viewSubmissionPayload,
  type Workspace,
} from './slack-wire.ts';

export type { Attempt } from './slack-retries.ts';
export type { FakeUser, Json, RecordedCall, StoredMessage, StoredView } from './slack-wire.ts';
export { sign } from './slack-wire.ts';

/** Options of FakeSlack.start. */
export interface FakeSlackOptions {
  botToken?: string;
  appToken?: string;
  signingSecret?: string;
}

/** The fake; start with `FakeSlack.start()`, always `close()` it. */
export class FakeSlack {
  /** Every Web API call, in order. */
  readonly calls: RecordedCall[] = [];
  /** Bodies POSTed to response_urls and accepted, with the url's id. */
  readonly responses: { id: string; body: Json }[] = [];
  /** Posts to response_urls Slack refused (expired or used up), with the url's id and status. */
  readonly refusedResponses: { id: string; status: number; body: string }[] = [];
  /** Slack's server-side clock: trigger ids, response_urls, ack deadlines, edit windows. */
  readonly clock = new FakeClock();
  /** Deliveries to the app with their retries. */
  readonly retries: FakeSlackRetries;
  /** The workspace the bot token belongs to. */
  readonly workspace: Workspace = { teamId: 'T0FAKE01', appId: 'A0FAKEAPP', botUserId: 'U0PBBOT' };
  /** Web API state: messages, ephemerals, views, files. */
  readonly api: FakeSlackWebApi;
  /** Socket Mode connections. */
  readonly socketMode: FakeSocketMode;
  /** The bot token's scopes, sent in `x-oauth-scopes` as Slack does; a test removes some. */
  scopes = [
    'app_mentions:read',
    'channels:history',
    'chat:write',
    'commands',
    'files:read',
    'files:write',
    'groups:history',
    'users:read',
  ];
  readonly botToken: string;
  readonly appToken: string;
  readonly signingSecret: string;
  /** The adapter's HTTP handler URL (HTTP mode). */
  target: string | undefined;
  /** Clock used to sign requests, ms. */
  now: () => number = Date.now;

  readonly #server: Server;
  readonly #failNext: { method: string; error?: string; retryAfter?: number }[] = [];
  readonly #watchers = new Set<() => boolean>();
  readonly #whenCalled: { method: string; run: () => void }[] = [];

  private constructor(server: Server, o: FakeSlackOptions) {
    this.#server = server;
    this.botToken = o.botToken ?? 'xoxb-fake-bot-token';
    this.appToken = o.appToken ?? 'xapp-fake-app-token';
    this.signingSecret = o.signingSecret ?? 'fake-signing-secret';
    this.api = new FakeSlackWebApi(
      this.workspace,
      () => this.origin,
      () => this.now(),
      this.clock,
    );
    this.socketMode = new FakeSocketMode(this.workspace.appId, () => this.api.next());
    this.retries = new FakeSlackRetries(
      this.clock,
      (request, retry) => this.deliver(request, retry?.num, retry?.reason),
      () => this.#notify(),
    );
  }

  /** Bot messages by channel, oldest first. */
  get messages(): Map<string, StoredMessage[]> {
    return this.api.messages;
  }

  /** Ephemeral messages (chat.postEphemeral parameters). */
  get ephemerals(): Json[] {
    return this.api.ephemerals;
  }

  /** Modals opened with views.open. */
  get views(): StoredView[] {
    return this.api.views;
  }

  /** Starts on an ephemeral 127.0.0.1 port. */
  static async start(options: FakeSlackOptions = {}): Promise<FakeSlack> {
    const server = createServer();
    const fake = new FakeSlack(server, options);
    server.on('request', (req, res) => void fake.#route(req, res));
    server.on('upgrade', (req, socket, head) => {
      fake.socketMode.handleUpgrade(req, socket, head);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return fake;
  }

  /** `http://127.0.0.1:PORT`. */
  get origin(): string {
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  /** The value for the adapter's apiUrl / WebClient's slackApiUrl. */
  get apiUrl(): string {
    return `${this.origin}/api/`;
  }

  /** True while a Socket Mode client is connected. */
  get socketConnected(): boolean {
    return this.socketMode.connected;
  }

  /** Asks the Socket Mode client to move to a new connection, as Slack does every few hours. */
  requestSocketRefresh(reason = 'refresh_requested'): void {
    this.socketMode.requestRefresh(reason);
  }

  /** Drops the Socket Mode connection abruptly (a network failure). */
  dropSocket(): void {
    this.socketMode.drop();
  }

  /** Closes sockets and keep-alive connections, then the server. */
  async close(): Promise<void> {
    this.clock.stop();
    this.socketMode.close();
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  /** The next call of `method` answers `{ok: false, error}`. */
  failNext(method: string, error: string): void {
    this.#failNext.push({ method, error });
  }

  /**
   * Runs `run` once when the next call of `method` arrives, before Slack answers it: a test moves
   * the clock there ("the bridge took 3 s to get here") and the fake's own state decides.
   */
  whenCalled(method: string, run: () => void): void {
    this.#whenCalled.push({ method, run });
  }

  /** The next call of `method` answers HTTP 429 with `Retry-After: seconds`. */
  rateLimitNext(method: string, seconds: number): void {
    this.#failNext.push({ method, retryAfter: seconds });
  }

  /** Successful calls of one method, in order. */
  okCalls(method: string): RecordedCall[] {
    return this.calls.filter((c) => c.ok && c.method === method);
  }

  /** Resolves once `count` successful calls of `method` were received. */
  waitForCalls(method: string, count = 1): Promise<RecordedCall[]> {
    return this.#waitFor(() =>
      this.okCalls(method).length >= count ? this.okCalls(method) : undefined,
    );
  }

  /** Every delivery attempt of the request `delivery` answered, first one included. */
  attemptsOf(delivery: Delivery): Attempt[] {
    return this.retries.of(delivery.request);
  }

  /** Resolves once `count` attempts of the request were made and answered (or timed out). */
  waitForAttempts(request: SlackRequest, count: number): Promise<Attempt[]> {
    return this.#waitFor(() => {
      const done = this.retries.of(request).filter((a) => a.status !== undefined || a.timedOut);
      return done.length >= count ? this.retries.of(request) : undefined;
    });
  }

  /** Resolves once `count` bodies were POSTed to response_urls. */
  waitForResponses(count = 1): Promise<{ id: string; body: Json }[]> {
    return this.#waitFor(() => (this.responses.length >= count ? this.responses : undefined));
  }

  /** A bot message by channel and ts. */
  message(channel: string, ts: string): StoredMessage | undefined {
    return this.api.message(channel, ts);
  }

  /** Headers of a request signed now (or at `timestampSec`). */
  signedHeaders(
    body: string,
    timestampSec = Math.floor(this.now() / 1000),
  ): Record<string, string> {
    const ts = String(timestampSec);
    return {
      'x-slack-request-timestamp': ts,
      'x-slack-signature': sign(this.signingSecret, ts, body),
    };
  }

  /** POSTs a raw body to the target with exactly the given headers. */
  async postRaw(
    body: string,
    headers: Record<string, string>,
  ): Promise<{ status: number; body: string }> {
    if (!this.target) throw new Error('FakeSlack.target is not set');
    const res = await fetch(this.target, { method: 'POST', headers, body });
    return { status: res.status, body: await res.text() };
  }

  /** A user types `/command text`. */
  sendCommand(o: {
    user: FakeUser;
    channel: string;
    text: string;
    command?: string;
  }): Promise<Delivery> {
    this.api.users.set(o.user.id, o.user);
    const form = commandForm(this.workspace, {
      ...o,
      command: o.command ?? '/pb',
      triggerId: this.api.issueTrigger(),
      responseUrl: this.#responseUrl('c'),
    });
    return this.retries.deliver({ kind: 'slash_commands', payload: form });
  }

  /** A user posts a message mentioning the bot (`<@bot> text`). */
  sendMention(o: {
    user: FakeUser;
    channel: string;
    text: string;
    threadTs?: string;
    /** Files shared with the message (the event's `files`). */
    files?: { name: string; data: Buffer }[];
  }): Promise<Delivery> {
    this.api.users.set(o.user.id, o.user);
    const envelope = mentionEnvelope(this.workspace, {
      ...o,
      text: `<@${this.workspace.botUserId}> ${o.text}`,
      ts: this.api.ts(),
      eventId: `Ev0${this.api.next()}`,
      ...(o.files && { files: o.files.map((f) => this.api.share(f.name, f.data)) }),
    });
    return this.retries.deliver({ kind: 'events_api', payload: envelope });
  }

  /**
   * A person posts `text` in the thread under the message `threadTs` (a `message` event, as
   * message.channels delivers it); `extra` adds event fields (subtype, bot_id…).
   */
  sendThreadReply(o: {
    user: FakeUser;
    channel: string;
    threadTs: string;
    text: string;
    extra?: Json;
    /** Files shared with the reply: the event gets subtype `file_share` and `files`, as Slack sends. */
    files?: { name: string; data: Buffer }[];
  }): Promise<Delivery> {
    this.api.users.set(o.user.id, o.user);
    const { files, ...rest } = o;
    const envelope = mentionEnvelope(this.workspace, {
      ...rest,
      ts: this.api.ts(),
      eventId: `Ev0${this.api.next()}`,
      ...(files && { files: files.map((f) => this.api.share(f.name, f.data)) }),
    });
    envelope.event = {
      ...envelope.event,
      type: 'message',
      channel_type: 'channel',
      ...(files && { subtype: 'file_share' }),
      ...o.extra,
    };
    return this.deliver({ kind: 'events_api', payload: envelope });
  }

  /**
   * A person edits their message `ts` (in the thread `threadTs`) to read `text`: a `message`
   * event of subtype `message_changed` carrying the message as it reads now, with `edited`.
   */
  editMessage(o: {
    user: FakeUser;
    channel: string;
    ts: string;
    threadTs?: string;
    text: string;
  }): Promise<Delivery> {
    const at = this.api.ts();
    const envelope = mentionEnvelope(this.workspace, {
      user: o.user,
      channel: o.channel,
      text: o.text,
      ts: at,
      eventId: `Ev0${this.api.next()}`,
    });
    envelope.event = {
      type: 'message',
      subtype: 'message_changed',
      hidden: true,
      channel: o.channel,
      channel_type: 'channel',
      ts: at,
      event_ts: at,
      message: {
        type: 'message',
        user: o.user.id,
        text: o.text,
        ts: o.ts,
        ...(o.threadTs !== undefined && { thread_ts: o.threadTs }),
        edited: { user: o.user.id, ts: at },
      },
    };
    return this.deliver({ kind: 'events_api', payload: envelope });
  }

  /**
   * A person writes `text` to the app in a direct message (a top-level `message` event from
   * message.im; `channel` is the IM's id, starting with D).
   */
  sendDirectMessage(o: { user: FakeUser; channel: string; text: string }): Promise<Delivery> {
    this.api.users.set(o.user.id, o.user);
    const envelope = mentionEnvelope(this.workspace, {
      ...o,
      ts: this.api.ts(),
      eventId: `Ev0${this.api.next()}`,
    });
    envelope.event = { ...envelope.event, type: 'message', channel_type: 'im' };
    return this.deliver({ kind: 'events_api', payload: envelope });
  }

  /** A user presses the button labelled `label` on a bot message. */
  pressButton(o: {
    user: FakeUser;
    channel: string;
    ts: string;
    label: string;
  }): Promise<Delivery> {
    this.api.users.set(o.user.id, o.user);
    const message = this.message(o.channel, o.ts);
    const buttons = (message?.blocks ?? [])
      .filter((b) => b.type === 'actions')
      .flatMap((b) => b.elements as Json[]);
    const button = buttons.find((b) => b.text.text === o.label);
    if (!message || message.deleted || !button)
      throw new Error(`no button "${o.label}" on ${o.channel}/${o.ts}`);
    const payload = blockActionsPayload(this.workspace, {
      user: o.user,
      message,
      button,
      triggerId: this.api.issueTrigger(),
      responseUrl: this.#responseUrl('a', { channel: o.channel, ts: o.ts }),
      actionTs: this.api.ts(),
    });
    return this.retries.deliver({ kind: 'interactive', payload });
  }

  /** A user submits an open modal with `value` in its input. */
  submitView(o: { user: FakeUser; viewId: string; value: string }): Promise<Delivery> {
    this.api.users.set(o.user.id, o.user);
    const stored = this.views.find((v) => v.id === o.viewId);
    if (!stored) throw new Error(`no view ${o.viewId}`);
    const payload = viewSubmissionPayload(this.workspace, {
      ...o,
      stored,
      triggerId: this.api.issueTrigger(),
    });
    return this.retries.deliver({ kind: 'interactive', payload });
  }

  /**
   * Sends a request to the app once, untimed: over the Socket Mode connection when one is open
   * (waiting for its ack), else as a signed HTTP POST to `target`. `retryNum` marks a redelivery
   * as Slack does (a test redelivering by hand); the senders above time theirs (`retries`).
   */
  async deliver(
    request: SlackRequest,
    retryNum?: number,
    reason: RetryReason = 'http_timeout',
  ): Promise<Delivery> {
    const overSocket = this.socketMode.deliver(request, retryNum);
    if (overSocket) return overSocket;
    const { body, contentType } = httpBody(request);
    const headers = {
      'content-type': contentType,
      ...this.signedHeaders(body),
      ...(retryNum !== undefined && {
        'x-slack-retry-num': String(retryNum),
        'x-slack-retry-reason': reason,
      }),
    };
    return { ...(await this.postRaw(body, headers)), request };
  }

  /**
   * A new response_url, registered with Slack's limits; `kind` c (command) or a (action), whose
   * `original` is the pressed message.
   */
  #responseUrl(kind: 'c' | 'a', original?: { channel: string; ts: string }): string {
    const id = this.api.interactions.issueResponseUrl(`${kind}${this.api.next()}`, original);
    return `${this.origin}/response/${id}`;
  }

  #waitFor<T>(probe: () => T | undefined): Promise<T> {
    return new Promise((resolve) => {
      const check = () => {
        const value = probe();
        if (value !== undefined) resolve(value);
        return value !== undefined;
      };
      if (!check()) this.#watchers.add(check);
    });
  }

  #notify(): void {
    for (const check of this.#watchers) if (check()) this.#watchers.delete(check);
  }

  async #route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks);
    const path = new URL(req.url ?? '/', this.origin).pathname;
    if (path.startsWith('/response/')) {
      this.#respond(path.slice('/response/'.length), raw, res);
    } else if (path.startsWith('/upload/')) {
      const body = uploadedBytes(raw, String(req.headers['content-type'] ?? ''));
      const known = this.api.upload(path.slice('/upload/'.length), body);
      res.writeHead(known ? 200 : 404).end(`OK - ${raw.length}`);
    } else if (path.startsWith('/files-pri/')) {
      // Slack serves private files only with a token that can see them (Bearer, files:read).
      const file = this.api.shared.get(path);
      const authorised = req.headers.authorization === `Bearer ${this.botToken}`;
      if (file && authorised && this.scopes.includes('files:read')) {
        this.api.downloads.push(path);
        res.writeHead(200, { 'content-length': file.data.length }).end(file.data);
      } else res.writeHead(file ? 403 : 404).end();
    } else if (path.startsWith('/api/')) {
      this.#api(path.slice('/api/'.length), req, raw.toString(), res);
    } else {
      res.writeHead(404).end();
    }
    this.#notify();
  }

  /** A post to a response_url: refused once spent; `replace_original`/`delete_original` act. */
  #respond(id: string, raw: Buffer, res: ServerResponse): void {
    const answer = this.api.interactions.useResponseUrl(id);
    if (answer.status !== 200) {
      this.refusedResponses.push({ id, status: answer.status, body: answer.body });
      res.writeHead(answer.status).end(answer.body);
      return;
    }
    const body = JSON.parse(raw.toString()) as Json;
    try {
      if (answer.original) this.api.respondTo(answer.original, body);
    } catch (err) {
      const error = err instanceof ApiError ? err.code : 'invalid_payload';
      this.refusedResponses.push({ id, status: 400, body: error });
      res.writeHead(400).end(error);
      return;
    }
    this.responses.push({ id, body });
    res.writeHead(200).end(answer.body);
  }

  #api(method: string, req: IncomingMessage, raw: string, res: ServerResponse): void {
    const params = readParams(raw, req.headers['content-type'] ?? '');
    const hook = this.#whenCalled.findIndex((h) => h.method === method);
    if (hook >= 0) this.#whenCalled.splice(hook, 1)[0]!.run();
    const record = (ok: boolean, error?: string) =>
      this.calls.push({ method, params, ok, ...(error !== undefined && { error }) });
    const fail = this.#failNext.findIndex((f) => f.method === method);
    if (fail >= 0) {
      const [f] = this.#failNext.splice(fail, 1);
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
      const expected = method === 'apps.connections.open' ? this.appToken : this.botToken;
      if (req.headers.authorization !== `Bearer ${expected}`) throw new ApiError('invalid_auth');
      const result = this.api.call(method, params);
      record(true);
      json(res, { ok: true, ...result }, { 'x-oauth-scopes': this.scopes.join(',') });
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
