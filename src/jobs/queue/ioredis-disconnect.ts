/**
 * A fix for ioredis (up to 6.0 at least, redis/ioredis#2169): `disconnect()` while the client
 * waits to reconnect clears the reconnect timer and ends nothing: no 'end' event, and the
 * commands waiting in its queues are never settled. BullMQ closes its blocking connection with
 * `disconnect()` and waits for 'end', so a worker closed during a Redis outage never closed.
 * Patched once: such a disconnect now ends the client as one of an idle client does (status
 * 'end', every waiting command rejected). A client the fix does not apply to is left as it was.
 */
import { Redis } from 'ioredis';

/** The error waiting commands get, as ioredis words it. */
const CLOSED = 'Connection is closed.';

/** What of ioredis' internals the fix needs (checked at run time, they are not public). */
interface Internals {
  status: string;
  setStatus(status: string): void;
  flushQueue(error: Error): void;
  prevCommandQueue?: { shift(): { command: { reject(e: Error): void } } | undefined } | null;
}

let patched = false;

/** Installs the fix (idempotent); false when this ioredis lacks what it relies on. */
export function fixDisconnectWhileReconnecting(): boolean {
  if (patched) return true;
  const proto = Redis.prototype as unknown as Partial<Internals> & {
    disconnect(reconnect?: boolean): void;
  };
  if (typeof proto.setStatus !== 'function' || typeof proto.flushQueue !== 'function') {
    return false;
  }
  const original = proto.disconnect;
  proto.disconnect = function disconnect(this: Internals, reconnect = false): void {
    const stranded = !reconnect && this.status === 'reconnecting';
    original.call(this, reconnect);
    if (!stranded || this.status !== 'reconnecting') return;
    this.setStatus('end');
    const error = new Error(CLOSED);
    this.flushQueue(error);
    // Commands in flight when the connection dropped wait here for a ready that never comes.
    const stash = this.prevCommandQueue;
    for (let item = stash?.shift(); item !== undefined; item = stash?.shift()) {
      item.command.reject(error);
    }
  };
  patched = true;
  return true;
}
