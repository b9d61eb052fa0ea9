/**
 * The bridge's view of the job workers registered on BullMQ (see bullmq-workers.ts), read every
 * few seconds so the console page and /metrics answer from memory. With the embedded queue
 * there is no registry: `states()` is null and the gauges are absent.
 */
import type { WorkerInfo } from '../jobs/queue/port.ts';
import { quietRepeats } from '../jobs/queue/repeated-errors.ts';
import type { Log } from '../log.ts';

/** How often the list is read. */
const REFRESH_MS = 5000;

/** A worker's one-line description: labels, engines, running jobs. */
export function describeWorker(w: WorkerInfo): string {
  const parts = [
    w.inProcess ? 'bridge' : 'worker',
    `labels ${w.labels.join(',') || '-'}`,
    `engines ${w.engines?.join(',') ?? 'all'}`,
    `running ${w.running.length}/${w.concurrency}`,
  ];
  return parts.join('; ');
}

/** Keeps the latest worker list of a queue. */
export class WorkerWatch {
  readonly #list: () => Promise<WorkerInfo[]>;
  /** A Redis outage fails every read: the first failure is logged, its repeats once a minute. */
  readonly #failed: (err: unknown) => void;
  #latest: WorkerInfo[] = [];
  #timer: NodeJS.Timeout | undefined;

  constructor(list: () => Promise<WorkerInfo[]>, log: Log) {
    this.#list = list;
    const report = quietRepeats((err) => log.warn({ err }, 'listing job workers failed'));
    this.#failed = (err) => report(err, 'listing job workers');
  }

  /** Reads the list now and then every few seconds. */
  async start(): Promise<void> {
    await this.refresh();
    this.#timer = setInterval(() => void this.refresh(), REFRESH_MS);
    this.#timer.unref();
  }

  /** Reads the list now (the previous one is kept when Redis does not answer). */
  async refresh(): Promise<WorkerInfo[]> {
    try {
      this.#latest = await this.#list();
    } catch (err) {
      this.#failed(err);
    }
    return this.#latest;
  }

  /** The latest list. */
  get latest(): readonly WorkerInfo[] {
    return this.#latest;
  }

  /** Workers by kind (remote `worker`, in-process `bridge`), for a gauge. */
  counts(): Record<string, number> {
    const out: Record<string, number> = { worker: 0, bridge: 0 };
    for (const w of this.#latest) out[w.inProcess ? 'bridge' : 'worker']! += 1;
    return out;
  }

  /** Jobs running on workers, by kind. */
  running(): Record<string, number> {
    const out: Record<string, number> = { worker: 0, bridge: 0 };
    for (const w of this.#latest) out[w.inProcess ? 'bridge' : 'worker']! += w.running.length;
    return out;
  }

  stop(): void {
    clearInterval(this.#timer);
  }
}
