/**
 * A bound on a BullMQ close whose Redis has gone silent (a network that drops every packet: no
 * refusal, no reset). BullMQ closes with QUIT and waits for its blocking commands, whose replies
 * never come then, so a stop never ended (docs/limits.md). The bound starts only once no job of
 * ours is running (a stop lets running steps finish, however long they take); when the close has
 * not ended CLOSE_SILENCE_MS after that, every connection is cut (its socket destroyed, what
 * waits on it failed), and the close then ends as after a refused connection.
 */

/**
 * How long a close may wait on Redis once no job runs: above BullMQ's longest blocking wait
 * (drainDelay, 5 s) and our command timeout (5 s), so a healthy or slow Redis is never cut.
 */
export const CLOSE_SILENCE_MS = 10_000;

/** How long a cut close may take to end before it is left behind (a cut ends its waits at once). */
const AFTER_CUT_MS = 5_000;

/**
 * Whether a close of this queue already found Redis silent (its bound ran out): the queue's and
 * its workers' later closes then cut as soon as no job runs, and skip what would only time out.
 */
export class RedisSilence {
  /** True once a bound ran out. */
  found = false;
}

/** What a bounded close needs: the graceful close, when no job runs, and the cut. */
export interface BoundedClose {
  /** The graceful close, already started. */
  graceful: Promise<void>;
  /** Resolves once no job of ours is running (the bound starts then). */
  idle: () => Promise<void>;
  /** Cuts every connection (the close's waits then fail at once). */
  cut: () => void;
  /** Told when the bound ran out and the connections were cut. */
  onCut?: (silenceMs: number) => void;
  /** The bound (default CLOSE_SILENCE_MS). */
  silenceMs?: number;
  /** Shared by a queue and its workers: once found silent, the bound is 0 and not reported. */
  silence?: RedisSilence;
}

/**
 * Waits for `graceful`; once `idle` and `silenceMs` later it has not ended, cuts and waits for
 * it at most AFTER_CUT_MS more. Resolves 'closed' or 'cut'; the graceful close's error is thrown.
 */
export async function closeWithin(c: BoundedClose): Promise<'closed' | 'cut'> {
  const silenceMs = c.silenceMs ?? CLOSE_SILENCE_MS;
  let timer: NodeJS.Timeout | undefined;
  let settled = false;
  const bound = c.idle().then(
    () =>
      new Promise<'bound'>((resolve) => {
        // No timer once the close has ended (it would hold the process for nothing).
        if (settled) return;
        timer = setTimeout(() => resolve('bound'), c.silence?.found ? 0 : silenceMs);
      }),
  );
  const ended = c.graceful.then(() => 'closed' as const);
  try {
    if ((await Promise.race([ended, bound])) === 'closed') return 'closed';
  } finally {
    settled = true;
    clearTimeout(timer);
  }
  if (c.silence?.found !== true) c.onCut?.(silenceMs);
  if (c.silence) c.silence.found = true;
  c.cut();
  let left: NodeJS.Timeout | undefined;
  await Promise.race([
    c.graceful.catch(() => undefined),
    new Promise<void>((resolve) => {
      left = setTimeout(resolve, AFTER_CUT_MS);
    }),
  ]).finally(() => clearTimeout(left));
  return 'cut';
}

/** The error reported when a close's bound ran out and its connections were cut. */
export function silentRedis(ms: number): Error {
  return new Error(
    `Redis did not answer for ${ms / 1000} s after the last job ended; its connections were cut so the stop could end (a job left active is taken again once its lock lapses)`,
  );
}

/** What of an ioredis client ending it needs. */
interface Client {
  status: string;
  disconnect(): void;
  stream?: { destroy(): void };
}

/** Disconnects an ioredis client unless it has ended (a disconnect then would only arm a timer). */
export function endClient(client: Client): void {
  if (client.status !== 'end') client.disconnect();
}

/**
 * Ends an ioredis client at once, after a silence: its socket destroyed rather than half-closed
 * (a silent peer never answers the FIN: ioredis would wait 2 s), what waits on it failed.
 */
export function cutClient(client: Client): void {
  if (client.status === 'end') return;
  client.disconnect();
  client.stream?.destroy();
}

/** Cuts the clients of a BullMQ backend (its own connection and its blocking one). */
export function cutBackend(backend: {
  client: Promise<Client>;
  blockingClient?: Promise<Client> | undefined;
}): void {
  for (const client of [backend.client, backend.blockingClient]) {
    client?.then(cutClient).catch(() => undefined);
  }
}

/** Counts running jobs; `idle()` resolves when none runs. */
export class RunningJobs {
  #running = 0;
  #waiters: (() => void)[] = [];

  /** A job started. */
  start(): void {
    this.#running++;
  }

  /** A job ended (its processor returned or threw). */
  end(): void {
    this.#running = Math.max(0, this.#running - 1);
    if (this.#running === 0) for (const w of this.#waiters.splice(0)) w();
  }

  /** Resolves once no job runs (at once when none does). */
  idle(): Promise<void> {
    if (this.#running === 0) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push(resolve));
  }
}
