/**
 * A TCP proxy that can cut the network between a process and a server (issue 33's network cut).
 * It listens on a free loopback port and pipes every connection to a target. `cut('blackhole')`
 * is a cable pulled or a firewall that drops packets: nothing is forwarded any more in either
 * direction, but every socket stays open and silent, so the client sees no error, only replies
 * that never come (new connections are accepted and held the same way). `cut('reset')` is a
 * refused network: every socket is destroyed and new ones are closed at once. `restore()`
 * forwards again for connections made from then on (a black-holed connection stays dead, as a
 * real one whose packets were dropped for long would be).
 */
import net from 'node:net';

/** How the network is cut: dropped packets (silence) or refused connections (errors). */
export type CutMode = 'blackhole' | 'reset';

interface Pair {
  readonly client: net.Socket;
  readonly upstream: net.Socket;
}

/** A proxy in front of `host:port`. */
export class TcpProxy {
  readonly #server: net.Server;
  readonly #target: { host: string; port: number };
  readonly #pairs = new Set<Pair>();
  /** Sockets of a black-holed network: held open, never read from or written to. */
  readonly #held = new Set<net.Socket>();
  #mode: CutMode | undefined;
  #port = 0;

  private constructor(target: { host: string; port: number }) {
    this.#target = target;
    this.#server = net.createServer((client) => this.#accept(client));
  }

  /** Starts a proxy to `target` on a free port of 127.0.0.1. */
  static async start(target: { host?: string; port: number }): Promise<TcpProxy> {
    const proxy = new TcpProxy({ host: target.host ?? '127.0.0.1', port: target.port });
    await new Promise<void>((resolve, reject) => {
      proxy.#server.once('error', reject);
      proxy.#server.listen(0, '127.0.0.1', () => resolve());
    });
    const address = proxy.#server.address();
    proxy.#port = typeof address === 'object' && address !== null ? address.port : 0;
    return proxy;
  }

  /** A proxy in front of the server at `url` (redis://, postgres://…), and the URL through it. */
  static async inFront(url: string): Promise<{ proxy: TcpProxy; url: string }> {
    const target = new URL(url);
    const proxy = await TcpProxy.start({ host: target.hostname, port: Number(target.port) });
    const via = new URL(url);
    via.hostname = '127.0.0.1';
    via.port = String(proxy.port);
    return { proxy, url: via.toString() };
  }

  /** The port clients connect to. */
  get port(): number {
    return this.#port;
  }

  /** Connections piped now (not cut). */
  get connections(): number {
    return this.#pairs.size;
  }

  /** Stops forwarding: `blackhole` holds every socket open and silent, `reset` destroys them. */
  cut(mode: CutMode): void {
    this.#mode = mode;
    for (const pair of this.#pairs) {
      if (mode === 'reset') {
        pair.client.destroy();
        pair.upstream.destroy();
        continue;
      }
      // Nothing more is read from either side, so nothing is forwarded; both ends stay open, as
      // a dropped packet tells neither side anything.
      pair.client.unpipe(pair.upstream);
      pair.upstream.unpipe(pair.client);
      pair.client.pause();
      pair.upstream.pause();
      this.#held.add(pair.client);
      this.#held.add(pair.upstream);
    }
    this.#pairs.clear();
  }

  /** Forwards again, for connections made from now on. */
  restore(): void {
    this.#mode = undefined;
  }

  /** Closes the listener and every socket. */
  async close(): Promise<void> {
    this.cut('reset');
    for (const s of this.#held) s.destroy();
    this.#held.clear();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  #accept(client: net.Socket): void {
    // A socket reset under a client is an event for the client, not an error of the proxy.
    client.on('error', () => {});
    if (this.#mode === 'reset') {
      client.destroy();
      return;
    }
    if (this.#mode === 'blackhole') {
      client.pause();
      this.#held.add(client);
      return;
    }
    const upstream = net.connect(this.#target.port, this.#target.host);
    // Its close (below) ends the pair, unless the pair is black-holed.
    upstream.on('error', () => {});
    const pair: Pair = { client, upstream };
    this.#pairs.add(pair);
    const forget = () => {
      // A black-holed pair is no longer listed: one side closing tells the other nothing.
      if (!this.#pairs.delete(pair)) return;
      client.destroy();
      upstream.destroy();
    };
    client.on('close', forget);
    upstream.on('close', forget);
    client.pipe(upstream);
    upstream.pipe(client);
  }
}
