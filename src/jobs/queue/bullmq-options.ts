/** The BullMQ driver's options and their defaults (bullmq-driver.ts reads them). */
import type { BullmqRetention } from './bullmq-retention.ts';
import type { ErrorReporter } from './outcome.ts';

/** Options of the BullMQ driver; the defaults suit production. */
export interface BullmqQueueOptions {
  /** redis://[user:password@]host:port[/db] (rediss:// for TLS). */
  url: string;
  /** BullMQ queue name (default 'phasebridge-jobs'). */
  queueName?: string;
  /** Key prefix (default 'phasebridge'); tests use a unique one. */
  prefix?: string;
  /** BullMQ job lock; a dead worker's job is recovered after about lockDuration + stalledInterval (default 30 s). */
  lockDurationMs?: number;
  /** How often workers look for stalled jobs (default 30 s). */
  stalledIntervalMs?: number;
  /** Times a job is taken again after its worker died, before it fails as lost (default 2). */
  maxLostRetries?: number;
  /** First retry delay of a job whose run already has a job running, doubling up to 1 s (default 100 ms). */
  runBusyRetryMs?: number;
  /** Where errors that cannot be thrown go (default: a process warning). */
  onError?: ErrorReporter;
  /** Worker registry heartbeat (default 5 s; a worker is listed until 3 heartbeats are missed). */
  workerHeartbeatMs?: number;
  /** How long and how many finished jobs Redis keeps (default `DEFAULT_BULLMQ_RETENTION`). */
  retention?: Partial<BullmqRetention>;
  /**
   * How long a Redis command of the queue's own connections may go unanswered before it fails
   * (default `DEFAULT_COMMAND_TIMEOUT_MS`; blocking connections have none, they wait by design).
   */
  commandTimeoutMs?: number;
  /**
   * How long a close waits on a Redis that does not answer, once no job runs, before it cuts the
   * connections (default `CLOSE_SILENCE_MS`, bullmq-close.ts; tests pass less).
   */
  closeSilenceMs?: number;
}

/**
 * Without a bound, a command sent into a network that drops packets (a cut, not a refusal: no
 * error ever comes) waits for TCP to give up, about 15 minutes: an enqueue hung so, with the run's
 * mutex held. 5 s is far above any healthy Redis answer; a leader passes a shorter one.
 */
export const DEFAULT_COMMAND_TIMEOUT_MS = 5_000;
