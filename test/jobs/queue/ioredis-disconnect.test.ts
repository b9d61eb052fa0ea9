/**
 * The ioredis fix (src/jobs/queue/ioredis-disconnect.ts): a client told to disconnect while it
 * waits to reconnect to a Redis that is gone ends, and what waited in its queue is rejected.
 * Without the fix neither happened, and BullMQ's close of a worker waited for the 'end' forever.
 * No Redis needed: the client points at a port nothing listens on.
 */
import net from 'node:net';
import { Redis } from 'ioredis';
import { afterEach, expect, it } from 'vitest';
import { fixDisconnectWhileReconnecting } from '../../../src/jobs/queue/ioredis-disconnect.ts';
import { waitUntil } from '../../support/slowdown.ts';

/** A port that was free a moment ago (a connect there is refused). */
async function deadPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const clients: Redis[] = [];
afterEach(() => {
  for (const c of clients.splice(0)) c.disconnect();
});

/** A client with the fix installed, waiting (a minute) to reconnect to a port nobody answers. */
async function reconnectingClient(): Promise<Redis> {
  expect(fixDisconnectWhileReconnecting()).toBe(true);
  const client = new Redis(await deadPort(), '127.0.0.1', {
    maxRetriesPerRequest: null,
    retryStrategy: () => 60_000,
  });
  clients.push(client);
  client.on('error', () => {});
  await waitUntil(() => client.status === 'reconnecting', { message: 'never reconnecting' });
  return client;
}

it('a client disconnected while it waits to reconnect ends and rejects its waiting commands', async () => {
  const client = await reconnectingClient();
  let answer: string | undefined;
  client.get('k').then(
    () => {
      answer = 'answered';
    },
    (err: Error) => {
      answer = err.message;
    },
  );
  let ended = false;
  client.once('end', () => {
    ended = true;
  });

  client.disconnect();

  expect(await waitUntil(() => answer, { message: 'the waiting GET never settled' })).toBe(
    'Connection is closed.',
  );
  await waitUntil(() => ended, { message: "the client never emitted 'end'" });
  expect(client.status).toBe('end');
});

it('a disconnect that asks to reconnect is left to ioredis (the client keeps trying)', async () => {
  const client = await reconnectingClient();
  client.disconnect(true);
  expect(client.status).toBe('reconnecting');
});
