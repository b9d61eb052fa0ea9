/**
 * Test set-up of the web console: a real HttpServer on 127.0.0.1:0 with the console mounted, a
 * login helper (real token, real cookie), and a reader of the real /events stream.
 */
import type { InboundEvent, InboundHandler } from '../../../src/bridges/events.ts';
import { WebChannel, type WebChannelOptions } from '../../../src/bridges/web/index.ts';
import { HttpServer, type Route } from '../../../src/http/server.ts';
import { signIn } from '../../support/console-login.ts';

/** A log that keeps what it is told (the server warns on non-loopback binds). */
export function memoryLog() {
  const lines: { level: string; obj: object; msg?: string }[] = [];
  const at =
    (level: string) =>
    (obj: object, msg?: string): void => {
      lines.push({ level, obj, ...(msg !== undefined && { msg }) });
    };
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

/** A running console. */
export interface TestConsole {
  readonly server: HttpServer;
  readonly channel: WebChannel;
  readonly base: string;
  /** Inbound events the handler received, in order. */
  readonly events: InboundEvent[];
  dispose(): Promise<void>;
}

/** Starts a console; `onEvent` runs inside the handler (e.g. to answer a press). */
export async function startConsole(
  opts: {
    onEvent?: InboundHandler;
    channel?: WebChannelOptions;
    routes?: (channel: WebChannel) => Route[];
  } = {},
): Promise<TestConsole> {
  const log = memoryLog();
  const channel = new WebChannel({ logger: log, ...opts.channel });
  const server = await HttpServer.start({
    host: '127.0.0.1',
    port: 0,
    log,
    routes: [channel.route, ...(opts.routes?.(channel) ?? [])],
  });
  const events: InboundEvent[] = [];
  await channel.start(async (event) => {
    events.push(event);
    await opts.onEvent?.(event);
  });
  return {
    server,
    channel,
    base: server.url,
    events,
    async dispose() {
      await channel.stop();
      await server.close();
    },
  };
}

/** A logged-in browser: its cookie and the page's CSRF token. */
export interface Browser {
  readonly cookie: string;
  readonly csrf: string;
}

/** Logs in with a fresh login token, like a browser opening the printed link. */
export async function login(c: TestConsole): Promise<Browser> {
  const res = await signIn(await c.channel.loginUrl(c.base));
  const setCookie = res.headers.get('set-cookie') ?? '';
  const cookie = setCookie.split(';')[0]!;
  const page = await (await fetch(`${c.base}/`, { headers: { cookie } })).text();
  const csrf = /name="csrf-token" content="([^"]+)"/.exec(page)?.[1] ?? '';
  return { cookie, csrf };
}

/** POSTs JSON as the console page's script does. */
export function post(
  c: TestConsole,
  b: Browser,
  path: string,
  body: Record<string, string>,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(`${c.base}${path}`, {
    method: 'POST',
    headers: {
      cookie: b.cookie,
      'content-type': 'application/json',
      accept: 'application/json',
      'x-csrf-token': b.csrf,
      origin: c.base,
      ...headers,
    },
    body: JSON.stringify(body),
  });
}

/** One parsed server-sent event. */
export interface SseMessage {
  readonly event: string;
  readonly id?: string;
  readonly data: unknown;
}

/** Reads /events as EventSource would. */
export class EventStream {
  readonly #abort = new AbortController();
  readonly #queue: SseMessage[] = [];
  readonly #waiters: (() => void)[] = [];
  #buffer = '';
  readonly status: number;
  /** Every event received, in order (taken or not). */
  readonly seen: SseMessage[] = [];

  private constructor(status: number) {
    this.status = status;
  }

  /** Opens the stream (resolves once the response headers arrived). */
  static async open(
    c: TestConsole,
    b: Browser,
    query = '',
    headers: Record<string, string> = {},
  ): Promise<EventStream> {
    const controller = new AbortController();
    const res = await fetch(`${c.base}/events${query}`, {
      headers: { cookie: b.cookie, accept: 'text/event-stream', ...headers },
      signal: controller.signal,
    });
    const s = new EventStream(res.status);
    s.#abort.signal.addEventListener('abort', () => controller.abort());
    if (res.body) void s.#pump(res.body);
    return s;
  }

  async #pump(body: ReadableStream<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder();
    try {
      for await (const chunk of body) {
        this.#buffer += decoder.decode(chunk, { stream: true });
        let end = this.#buffer.indexOf('\n\n');
        while (end >= 0) {
          this.#parse(this.#buffer.slice(0, end));
          this.#buffer = this.#buffer.slice(end + 2);
          end = this.#buffer.indexOf('\n\n');
        }
      }
    } catch {
      // aborted by close()
    }
  }

  #parse(block: string): void {
    let event = 'message';
    let id: string | undefined;
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith('event: ')) event = line.slice(7);
      else if (line.startsWith('id: ')) id = line.slice(4);
      else if (line.startsWith('data: ')) data.push(line.slice(6));
    }
    if (data.length === 0) return; // comments and retry lines
    const message = { event, ...(id !== undefined && { id }), data: JSON.parse(data.join('\n')) };
    this.#queue.push(message);
    this.seen.push(message);
    for (const w of this.#waiters.splice(0)) w();
  }

  /** The next event of this type (earlier events of other types are skipped). */
  async next(event: string): Promise<SseMessage> {
    for (;;) {
      const i = this.#queue.findIndex((m) => m.event === event);
      if (i >= 0) return this.#queue.splice(i, 1)[0]!;
      await new Promise<void>((resolve) => this.#waiters.push(resolve));
    }
  }

  /** The next event of this type whose data satisfies `match` (others of the type are dropped). */
  async until(event: string, match: (data: unknown) => boolean): Promise<SseMessage> {
    for (;;) {
      const m = await this.next(event);
      if (match(m.data)) return m;
    }
  }

  /** Events received and not yet taken. */
  pending(): readonly SseMessage[] {
    return this.#queue;
  }

  /** Closes the stream. */
  close(): void {
    this.#abort.abort();
  }
}
