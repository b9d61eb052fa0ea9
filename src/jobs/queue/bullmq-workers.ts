/**
 * The worker registry on Redis (BullMQ driver): each worker keeps a key with what it is (host,
 * pid, labels, engines, concurrency) and what it runs, rewritten every heartbeat with a TTL of
 * three heartbeats, so a worker that vanished drops out of the list on its own. Its jobs are
 * recovered by BullMQ's lock/stalled logic, not by this registry (it is for people: doctor,
 * /metrics, the console).
 */
import { hostname } from 'node:os';
import type { Redis } from 'ioredis';
import type { ErrorReporter } from './outcome.ts';
import type { WorkerAnnouncement, WorkerInfo } from './port.ts';

/** Default time between heartbeats. */
export const WORKER_HEARTBEAT_MS = 5000;

/** Key names of the registry. */
export class WorkerKeys {
  constructor(private readonly base: string) {}
  /** The set of registered ids. */
  get all(): string {
    return `${this.base}:pb:workers`;
  }
  /** One worker's record. */
  one(id: string): string {
    return `${this.base}:pb:worker:${id}`;
  }
}

/** A worker's registration, refreshed until `stop`. */
export class WorkerBeat {
  readonly #info: WorkerInfo;
  readonly #timer: NodeJS.Timeout;
  readonly #running = new Set<string>();
  #stopped = false;

  constructor(
    private readonly redis: Redis,
    private readonly keys: WorkerKeys,
    id: string,
    concurrency: number,
    announce: WorkerAnnouncement,
    private readonly heartbeatMs: number,
    private readonly onError: ErrorReporter,
  ) {
    const now = new Date().toISOString();
    this.#info = {
      id,
      host: hostname(),
      pid: process.pid,
      labels: [...announce.labels],
      ...(announce.engines === undefined ? {} : { engines: [...announce.engines] }),
      inProcess: announce.inProcess === true,
      concurrency,
      running: [],
      startedAt: now,
      seenAt: now,
    };
    this.#timer = setInterval(() => void this.beat(), heartbeatMs);
    this.#timer.unref();
  }

  /** Writes the record now (the first call registers the worker). */
  async beat(): Promise<void> {
    if (this.#stopped) return;
    const info = { ...this.#info, running: [...this.#running], seenAt: new Date().toISOString() };
    try {
      await this.redis
        .multi()
        .set(this.keys.one(info.id), JSON.stringify(info), 'PX', this.heartbeatMs * 3)
        .sadd(this.keys.all, info.id)
        .exec();
    } catch (err) {
      // One in flight when the worker stopped fails with its connection: nothing to report.
      if (!this.#stopped) this.onError(err, `worker ${info.id} heartbeat`);
    }
  }

  /** A job started (true) or ended (false) here; the record is rewritten at once. */
  running(jobId: string, on: boolean): void {
    if (on) this.#running.add(jobId);
    else this.#running.delete(jobId);
    void this.beat();
  }

  /** Stops the heartbeat and removes the record. */
  async stop(opts: { unregister?: boolean } = {}): Promise<void> {
    this.#stopped = true;
    clearInterval(this.#timer);
    // Redis gone or silent (a stop during an outage): the record lapses with its TTL; removing
    // it would only wait out the command timeout.
    if (this.redis.status !== 'ready' || opts.unregister === false) return;
    await this.redis
      .multi()
      .del(this.keys.one(this.#info.id))
      .srem(this.keys.all, this.#info.id)
      .exec()
      .catch((err: unknown) => this.onError(err, `unregistering worker ${this.#info.id}`));
  }
}

/** Workers whose record is alive, oldest first; ids whose record expired are dropped from the set. */
export async function listWorkers(redis: Redis, keys: WorkerKeys): Promise<WorkerInfo[]> {
  const ids = await redis.smembers(keys.all);
  if (ids.length === 0) return [];
  const records = await redis.mget(ids.map((id) => keys.one(id)));
  const out: WorkerInfo[] = [];
  const gone: string[] = [];
  records.forEach((text, i) => {
    if (text === null) gone.push(ids[i]!);
    else {
      try {
        out.push(JSON.parse(text) as WorkerInfo);
      } catch {
        gone.push(ids[i]!);
      }
    }
  });
  if (gone.length > 0) await redis.srem(keys.all, ...gone);
  return out.sort((a, b) => a.startedAt.localeCompare(b.startedAt));
}
