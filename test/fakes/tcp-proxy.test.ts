/**
 * The TCP proxy the network-cut stories rely on: it forwards both ways, a black-holed network
 * answers nothing and reports nothing (no error, no close) on old and new connections, a reset
 * one closes them, and a restored one forwards new connections again.
 */
import net from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { holdsFor, waitUntil } from '../support/slowdown.ts';
import { TcpProxy } from './tcp-proxy.ts';

let echo: net.Server;
let proxy: TcpProxy;
const sockets: net.Socket[] = [];

beforeEach(async () => {
  echo = net.createServer((s) => s.pipe(s));
  await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', () => resolve()));
  const address = echo.address() as net.AddressInfo;
  proxy = await TcpProxy.start({ port: address.port });
});

afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await proxy.close();
  await new Promise<void>((resolve) => echo.close(() => resolve()));
});

/** A client through the proxy that records what it receives and whether it ended. */
async function client() {
  const socket = net.connect(proxy.port, '127.0.0.1');
  sockets.push(socket);
  const seen = { data: '', ended: false, error: false };
  socket.on('data', (c: Buffer) => {
    seen.data += c.toString();
  });
  socket.on('close', () => {
    seen.ended = true;
  });
  socket.on('error', () => {
    seen.error = true;
  });
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  return { socket, seen };
}

describe('TcpProxy', () => {
  it('forwards both ways', async () => {
    const { socket, seen } = await client();
    socket.write('ping');
    await waitUntil(() => seen.data === 'ping', { message: `echoed ${seen.data}` });
    expect(proxy.connections).toBe(1);
  });

  it('black-holed: an open connection and a new one get no answer and no error', async () => {
    const old = await client();
    old.socket.write('a');
    await waitUntil(() => old.seen.data === 'a');
    proxy.cut('blackhole');
    old.socket.write('b');
    const fresh = await client();
    fresh.socket.write('c');
    const silent = () =>
      old.seen.data === 'a' &&
      !old.seen.ended &&
      !old.seen.error &&
      fresh.seen.data === '' &&
      !fresh.seen.ended &&
      !fresh.seen.error;
    await holdsFor(
      silent,
      300,
      `the black hole answered or closed: ${JSON.stringify([old.seen, fresh.seen])}`,
    );
  });

  it('reset: open connections are closed; restored: new ones are forwarded again', async () => {
    const old = await client();
    proxy.cut('reset');
    await waitUntil(() => old.seen.ended, { message: 'the reset connection stayed open' });
    proxy.restore();
    const fresh = await client();
    fresh.socket.write('again');
    await waitUntil(() => fresh.seen.data === 'again', { message: `echoed ${fresh.seen.data}` });
  });
});
