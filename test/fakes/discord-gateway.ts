/**
 * The fake Discord gateway: a `ws` server (noServer, fed from the HTTP server's 'upgrade')
 * speaking gateway v10 in JSON without compression: HELLO, IDENTIFY → READY + GUILD_CREATE per
 * guild, heartbeats (op 1 → op 11), RESUME → replay of missed dispatches + RESUMED, and what
 * Discord does to a connection on its own: drop it, ask for a reconnect (op 7), invalidate the
 * session (op 9, resumable or not), or go zombie (heartbeats no longer acknowledged).
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { type WebSocket, WebSocketServer } from 'ws';
import type { Json, JsonObject } from './discord-wire.ts';

/** Gateway opcodes the fake speaks. */
export const Op = {
  Dispatch: 0,
  Heartbeat: 1,
  Identify: 2,
  Resume: 6,
  Reconnect: 7,
  InvalidSession: 9,
  Hello: 10,
  HeartbeatAck: 11,
} as const;

/** A payload received from a client, with the path it connected to. */
export interface ReceivedPayload {
  readonly op: number;
  readonly d: Json;
  readonly path: string;
}

/** What the gateway needs from the fake it belongs to. */
export interface GatewayHost {
  readonly token: string;
  readonly heartbeatIntervalMs: number;
  /** READY's `d` for a new session (without session_id and resume_gateway_url). */
  readyPayload(): JsonObject;
  /** GUILD_CREATE's `d` for each guild. */
  guildPayloads(): JsonObject[];
  /** Called after every received payload and dispatch, so waiters can re-check. */
  changed(): void;
  /** False when IDENTIFY asks for a privileged intent the application has not enabled (4014). */
  intentsAllowed?(intents: number): boolean;
}

interface Session {
  readonly id: string;
  seq: number;
  readonly events: { s: number; t: string; d: Json }[];
  socket: WebSocket | undefined;
}

/** The gateway side of the fake. */
export class FakeGateway {
  /** Every payload clients sent, in order. */
  readonly received: ReceivedPayload[] = [];
  /** How many IDENTIFYs and successful RESUMEs were handled. */
  identifies = 0;
  resumes = 0;
  /** The intents of the last IDENTIFY. */
  intents = 0;
  /** The URL READY gives as `resume_gateway_url` (set by the owner once it knows its port). */
  resumeUrl = '';

  readonly #host: GatewayHost;
  readonly #wss = new WebSocketServer({ noServer: true });
  readonly #sockets = new Set<WebSocket>();
  /** A connection whose heartbeats are no longer acknowledged (a zombie). */
  #zombie: WebSocket | undefined;
  #session: Session | undefined;

  constructor(host: GatewayHost) {
    this.#host = host;
  }

  /** Takes over an HTTP upgrade request. */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const path = new URL(req.url ?? '/', 'http://fake').pathname;
    this.#wss.handleUpgrade(req, socket, head, (ws) => this.#accept(ws, path));
  }

  /** True while a client holds an identified or resumed connection. */
  get connected(): boolean {
    return this.#session?.socket !== undefined;
  }

  /** Sends a dispatch now, or keeps it for the replay after a resume when no client is connected. */
  dispatch(t: string, d: Json): void {
    const session = this.#session;
    if (!session) throw new Error('fake gateway: no session (the client never identified)');
    const event = { s: ++session.seq, t, d };
    session.events.push(event);
    session.socket?.send(JSON.stringify({ op: Op.Dispatch, ...event }));
    this.#host.changed();
  }

  /**
   * Drops the client's connection: abruptly (like a network failure) by default, or with a close
   * code. The session stays resumable; dispatches meanwhile are replayed on RESUME.
   */
  drop(code?: number): void {
    const socket = this.#session?.socket;
    if (!socket) return;
    this.#session!.socket = undefined;
    if (code === undefined) socket.terminate();
    else socket.close(code, 'fake gateway drop');
  }

  /** Asks the client to reconnect and resume (op 7 Reconnect), as Discord does before maintenance. */
  requestReconnect(): void {
    this.#session?.socket?.send(JSON.stringify({ op: Op.Reconnect, d: null }));
  }

  /**
   * Invalidates the session (op 9). Resumable: the client may RESUME it. Not resumable: the session
   * is forgotten, a RESUME would be refused, the client must IDENTIFY anew.
   */
  invalidateSession(resumable: boolean): void {
    const socket = this.#session?.socket;
    if (!socket) return;
    if (!resumable) this.#session = undefined;
    socket.send(JSON.stringify({ op: Op.InvalidSession, d: resumable }));
  }

  /** The current connection stops acknowledging heartbeats (the client should call it a zombie). */
  goZombie(): void {
    this.#zombie = this.#session?.socket;
  }

  /** Closes every connection and the server. */
  close(): void {
    for (const ws of this.#sockets) ws.terminate();
    this.#wss.close();
  }

  #accept(ws: WebSocket, path: string): void {
    this.#sockets.add(ws);
    ws.on('close', () => {
      this.#sockets.delete(ws);
      if (this.#session?.socket === ws) this.#session.socket = undefined;
    });
    ws.on('message', (raw) => this.#receive(ws, path, String(raw)));
    ws.send(
      JSON.stringify({ op: Op.Hello, d: { heartbeat_interval: this.#host.heartbeatIntervalMs } }),
    );
  }

  #receive(ws: WebSocket, path: string, raw: string): void {
    let payload: { op: number; d: Json };
    try {
      payload = JSON.parse(raw) as { op: number; d: Json };
    } catch {
      ws.close(4002, 'Error while decoding payload.');
      return;
    }
    this.received.push({ op: payload.op, d: payload.d, path });
    if (payload.op === Op.Heartbeat) {
      if (ws !== this.#zombie) ws.send(JSON.stringify({ op: Op.HeartbeatAck }));
    } else if (payload.op === Op.Identify) this.#identify(ws, payload.d as JsonObject);
    else if (payload.op === Op.Resume) this.#resume(ws, payload.d as JsonObject);
    this.#host.changed();
  }

  #identify(ws: WebSocket, d: JsonObject): void {
    if (d.token !== this.#host.token) {
      ws.close(4004, 'Authentication failed.');
      return;
    }
    const intents = typeof d.intents === 'number' ? d.intents : 0;
    if (this.#host.intentsAllowed && !this.#host.intentsAllowed(intents)) {
      ws.close(4014, 'Disallowed intent(s).');
      return;
    }
    this.intents = intents;
    this.identifies++;
    this.#session = { id: randomBytes(16).toString('hex'), seq: 0, events: [], socket: ws };
    this.dispatch('READY', {
      ...this.#host.readyPayload(),
      session_id: this.#session.id,
      resume_gateway_url: this.resumeUrl,
    });
    for (const guild of this.#host.guildPayloads()) this.dispatch('GUILD_CREATE', guild);
  }

  #resume(ws: WebSocket, d: JsonObject): void {
    const session = this.#session;
    if (d.token !== this.#host.token || !session || d.session_id !== session.id) {
      ws.send(JSON.stringify({ op: Op.InvalidSession, d: false }));
      return;
    }
    this.resumes++;
    session.socket = ws;
    const from = typeof d.seq === 'number' ? d.seq : 0;
    for (const event of session.events.filter((e) => e.s > from)) {
      ws.send(JSON.stringify({ op: Op.Dispatch, ...event }));
    }
    this.dispatch('RESUMED', null);
  }
}
