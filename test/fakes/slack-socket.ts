/**
 * The Socket Mode side of the fake Slack: the WebSocket server `apps.connections.open` points at,
 * `hello` on connect, envelopes sent and acked by `envelope_id`, and what Slack does to a
 * connection on its own: ask for a refresh (`disconnect` / `refresh_requested`; the old
 * connection is closed once the new one is open) or drop it.
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { type WebSocket, WebSocketServer } from 'ws';
import type { Delivery, Json, SlackRequest } from './slack-wire.ts';

/** Socket Mode connections of the fake. */
export class FakeSocketMode {
  readonly #wss = new WebSocketServer({ noServer: true });
  readonly #acks = new Map<string, (payload: Json) => void>();
  #socket: WebSocket | undefined;
  /** A connection told to refresh, closed once its successor connects. */
  #retiring: WebSocket | undefined;

  /** `appId` goes into `hello`; `nextId` numbers envelopes. */
  constructor(
    readonly appId: string,
    readonly nextId: () => number,
  ) {}

  /** Takes over an HTTP upgrade request. */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    this.#wss.handleUpgrade(req, socket, head, (ws) => this.#onSocket(ws));
  }

  /** True while a client is connected. */
  get connected(): boolean {
    return this.#socket !== undefined;
  }

  /** Asks the client to move to a new connection (`{type: 'disconnect', reason}`). */
  requestRefresh(reason: string): void {
    const old = this.#socket;
    old?.send(JSON.stringify({ type: 'disconnect', reason, debug_info: { host: 'fake' } }));
    this.#retiring = old;
  }

  /** Drops the connection abruptly (a network failure). */
  drop(): void {
    const old = this.#socket;
    this.#socket = undefined;
    old?.terminate();
  }

  /** Closes every connection and the server. */
  close(): void {
    for (const ws of this.#wss.clients) ws.terminate();
    this.#wss.close();
  }

  /** Sends an envelope over the newest connection and resolves with its ack; undefined when none. */
  deliver(request: SlackRequest, retryNum?: number): Promise<Delivery> | undefined {
    const ws = this.#socket;
    if (!ws) return undefined;
    const envelopeId = `env-${this.nextId()}`;
    return new Promise((resolve) => {
      this.#acks.set(envelopeId, (payload) =>
        resolve({ status: 200, body: JSON.stringify(payload), request }),
      );
      ws.send(
        JSON.stringify({
          envelope_id: envelopeId,
          type: request.kind,
          payload: request.payload,
          accepts_response_payload: request.kind !== 'events_api',
          ...(retryNum !== undefined && { retry_attempt: retryNum, retry_reason: 'timeout' }),
        }),
      );
    });
  }

  #onSocket(ws: WebSocket): void {
    this.#socket = ws;
    if (this.#retiring && this.#retiring !== ws) {
      this.#retiring.close(1000, 'refreshed');
      this.#retiring = undefined;
    }
    ws.on('message', (data) => {
      const msg = JSON.parse(String(data)) as Json;
      this.#acks.get(msg.envelope_id)?.(msg.payload ?? {});
      this.#acks.delete(msg.envelope_id);
    });
    ws.on('close', () => {
      if (this.#socket === ws) this.#socket = undefined;
    });
    ws.send(
      JSON.stringify({
        type: 'hello',
        num_connections: 1,
        connection_info: { app_id: this.appId },
      }),
    );
  }
}
