/**
 * Reconnection of the BullMQ driver's Redis connections, and its end. BullMQ closes a connection
 * with QUIT, which waits in ioredis' offline queue for a Redis that is gone (and ioredis'
 * `disconnect()` during a pending reconnect neither flushes that queue nor ends the client): a
 * bridge stopped during a Redis outage never stopped. Once closing, the next reconnect gives up,
 * which ends the client and fails what waits, so a close ends within one reconnect delay
 * (ioredis-disconnect.ts: a disconnect while a reconnect is pending ends the client at once).
 */

/**
 * The longest wait between two reconnects, and so about the longest a close waits for a Redis
 * that is gone (BullMQ's own default grows to 20 s). The errors of the attempts are reported
 * once a minute (repeated-errors.ts), so trying more often costs no log lines.
 */
export const MAX_RECONNECT_DELAY_MS = 2_000;

/** A set of connections that reconnect with backoff until they are closing. */
export class ReconnectPolicy {
  #closing = false;

  /**
   * ioredis' `retryStrategy`: the next reconnect's delay in ms (BullMQ's schedule, 1 s for the
   * first seven, up to the cap), or null once closing.
   */
  readonly retryStrategy = (times: number): number | null =>
    this.#closing ? null : Math.max(Math.min(Math.exp(times), MAX_RECONNECT_DELAY_MS), 1_000);

  /** From now on a connection that is lost is not made again. */
  close(): void {
    this.#closing = true;
  }
}
