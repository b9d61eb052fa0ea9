/**
 * Server-sent events to the console's open pages. Chat messages go to every page (with the
 * message version as event id, so EventSource's Last-Event-ID resumes a dropped stream); toasts
 * and reason prompts go to one session, and to one tab of it when the page said which.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { BASE_HEADERS } from '../../http/respond.ts';

/** One event to write. */
export interface SseEvent {
  readonly event: string;
  readonly data: unknown;
  /** Set for chat messages only: the version a reconnecting page resumes from. */
  readonly id?: number;
}

interface Client {
  readonly res: ServerResponse;
  readonly sessionId: string;
  readonly tab: string | undefined;
  /** False once the stream's session is gone (revoked, expired): the stream is then ended. */
  readonly stillValid?: (() => Promise<boolean>) | undefined;
}

/** How often streams whose session may end are checked (a revoke ends them within this). */
const VALIDITY_CHECK_MS = 2_000;

/** A client that stops reading is cut off past this much unsent data; it reconnects and resumes. */
const MAX_BUFFERED_BYTES = 1024 * 1024;

/** Formats one event in the text/event-stream syntax (data is one JSON line). */
export function formatSseEvent(e: SseEvent): string {
  const id = e.id === undefined ? '' : `id: ${e.id}\n`;
  return `${id}event: ${e.event}\ndata: ${JSON.stringify(e.data)}\n\n`;
}

/** The open event streams. */
export class SseHub {
  readonly #clients = new Set<Client>();
  readonly #heartbeatMs: number;
  #heartbeat: NodeJS.Timeout | undefined;
  #validity: NodeJS.Timeout | undefined;

  /** While streams are open, a comment goes out every `heartbeatMs` so idle streams stay open. */
  constructor(heartbeatMs = 25_000) {
    this.#heartbeatMs = heartbeatMs;
  }

  /** Number of open streams. */
  get size(): number {
    return this.#clients.size;
  }

  /**
   * Starts a stream and writes `initial` (the replay) first. With `stillValid`, the stream is
   * checked every 2 s and ended once its session is gone (revoked in another process too).
   */
  open(
    req: IncomingMessage,
    res: ServerResponse,
    who: { sessionId: string; tab: string | undefined },
    initial: readonly SseEvent[],
    stillValid?: () => Promise<boolean>,
  ): void {
    res.writeHead(200, {
      ...BASE_HEADERS,
      'content-type': 'text/event-stream; charset=utf-8',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    const client: Client = { res, ...who, stillValid };
    this.#clients.add(client);
    req.once('close', () => this.#remove(client));
    if (this.#heartbeat === undefined) {
      this.#heartbeat = setInterval(() => this.#writeAll(': ping\n\n'), this.#heartbeatMs);
      this.#heartbeat.unref();
    }
    if (stillValid !== undefined && this.#validity === undefined) {
      this.#validity = setInterval(() => void this.#endInvalid(), VALIDITY_CHECK_MS);
      this.#validity.unref();
    }
    res.write(`retry: 2000\n\n${initial.map(formatSseEvent).join('')}`);
  }

  /** Sends an event to every stream. */
  broadcast(e: SseEvent): void {
    this.#writeAll(formatSseEvent(e));
  }

  /**
   * Sends an event to one session: to the tab named when it has a stream open, else to every
   * stream of the session. Returns how many streams got it.
   */
  sendTo(sessionId: string, tab: string | undefined, e: SseEvent): number {
    const mine = [...this.#clients].filter((c) => c.sessionId === sessionId);
    const exact = mine.filter((c) => tab !== undefined && c.tab === tab);
    const targets = exact.length > 0 ? exact : mine;
    const text = formatSseEvent(e);
    for (const c of targets) this.#write(c, text);
    return targets.length;
  }

  /** Ends every stream (graceful stop, so the server's close is not held up by them). */
  closeAll(): void {
    for (const c of this.#clients) {
      c.res.end();
      this.#remove(c);
    }
  }

  /** Ends the streams whose session is gone; a failed check keeps the stream (next time). */
  async #endInvalid(): Promise<void> {
    for (const c of this.#clients) {
      if (c.stillValid === undefined) continue;
      const valid = await c.stillValid().catch(() => true);
      if (valid || !this.#clients.has(c)) continue;
      this.#remove(c);
      c.res.end();
    }
  }

  #remove(c: Client): void {
    this.#clients.delete(c);
    if (this.#clients.size === 0 && this.#heartbeat !== undefined) {
      clearInterval(this.#heartbeat);
      this.#heartbeat = undefined;
    }
    if (![...this.#clients].some((x) => x.stillValid) && this.#validity !== undefined) {
      clearInterval(this.#validity);
      this.#validity = undefined;
    }
  }

  #writeAll(text: string): void {
    for (const c of this.#clients) this.#write(c, text);
  }

  #write(c: Client, text: string): void {
    if (c.res.writableLength > MAX_BUFFERED_BYTES) {
      this.#remove(c);
      c.res.destroy();
      return;
    }
    c.res.write(text);
  }
}
