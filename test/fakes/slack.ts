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
import { FakeSlackHttp } from './slack-http.ts';
import {
  type DirectMessageInput,
  directMessageRequest,
  type MentionInput,
  type MessageEditInput,
  mentionRequest,
  messageEditRequest,
  type ThreadReplyInput,
  threadReplyRequest,
} from './slack-people.ts';
import { type Attempt, FakeSlackRetries, type RetryReason } from './slack-retries.ts';
import { FakeSocketMode } from './slack-socket.ts';
import {
  blockActionsPayload,
  commandForm,
  type Delivery,
  type FakeUser,
  httpBody,
  type Json,
  type RecordedCall,
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
  /** Web API calls, response_urls, uploads and file downloads (slack-http.ts). */
  readonly #http: FakeSlackHttp;
  readonly #watchers = new Set<() => boolean>();

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
    this.#http = new FakeSlackHttp(this);
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
    this.#http.failNext.push({ method, error });
  }

  /**
   * Runs `run` once when the next call of `method` arrives, before Slack answers it: a test moves
   * the clock there ("the bridge took 3 s to get here") and the fake's own state decides.
   */
  whenCalled(method: string, run: () => void): void {
    this.#http.whenCalled.push({ method, run });
  }

  /** The next call of `method` answers HTTP 429 with `Retry-After: seconds`. */
  rateLimitNext(method: string, seconds: number): void {
    this.#http.failNext.push({ method, retryAfter: seconds });
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
  sendMention(o: MentionInput): Promise<Delivery> {
    return this.retries.deliver(mentionRequest(this.workspace, this.api, o));
  }

  /**
   * A person posts `text` in the thread under the message `threadTs` (a `message` event, as
   * message.channels delivers it); `extra` adds event fields (subtype, bot_id…).
   */
  sendThreadReply(o: ThreadReplyInput): Promise<Delivery> {
    return this.deliver(threadReplyRequest(this.workspace, this.api, o));
  }

  /**
   * A person edits their message `ts` (in the thread `threadTs`) to read `text`: a `message`
   * event of subtype `message_changed` carrying the message as it reads now, with `edited`.
   */
  editMessage(o: MessageEditInput): Promise<Delivery> {
    return this.deliver(messageEditRequest(this.workspace, this.api, o));
  }

  /**
   * A person writes `text` to the app in a direct message (a top-level `message` event from
   * message.im; `channel` is the IM's id, starting with D).
   */
  sendDirectMessage(o: DirectMessageInput): Promise<Delivery> {
    return this.deliver(directMessageRequest(this.workspace, this.api, o));
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
    await this.#http.route(req, res);
    this.#notify();
  }
}
