/**
 * Prometheus metrics (prom-client). One registry per bridge process, no global default registry,
 * so tests and several bridges in one process never share counters. Adapters and chatops report
 * through the small methods of `BridgeMetrics`; gauges that mirror stored state (runs by status,
 * jobs by state) are read from collector callbacks at scrape time, so nobody has to push them.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { RateLimitedError } from '../errors.ts';
import { BASE_HEADERS, sendText } from './respond.ts';
import type { HttpLogger, RequestHandler } from './server.ts';

/** Outcome of one call to a chat platform's API. */
export type PlatformCallOutcome = 'ok' | 'rate_limited' | 'error';

/** Counts per label value, read at scrape time (e.g. `{ active: 2, completed: 10 }`). */
export type CountCollector = () => Promise<Readonly<Record<string, number>>>;

/** Options of `BridgeMetrics`. */
export interface BridgeMetricsOptions {
  readonly log: HttpLogger;
  /** Runs by status, e.g. a COUNT over bridge.db's runs index. */
  readonly runsByStatus?: CountCollector;
  /** Jobs by state (waiting, active, completed, failed, cancelled). */
  readonly jobsByState?: CountCollector;
  /** Registered job workers by kind (`worker`, `bridge`); BullMQ only. */
  readonly workersByKind?: CountCollector;
  /** Jobs running on registered workers by kind; BullMQ only. */
  readonly runningByKind?: CountCollector;
  /**
   * What this bridge is, as labels of `phasebridge_bridge_info` (always 1): its role (`leader`:
   * it owns the platform connections; `standby`: it waits for the leader lease), where
   * bridge.db lives and which job queue it uses.
   */
  readonly info?: { readonly role: string; readonly database: string; readonly queue: string };
  /** Seconds since the leader lease was last renewed (several `serve` with a lease only). */
  readonly leaseAgeSeconds?: () => Promise<number | undefined>;
  /** Node process metrics (CPU, memory, event loop lag); default true. */
  readonly processMetrics?: boolean;
}

/** Agent steps take seconds to hours. */
const STEP_BUCKETS = [1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, 4 * 3600];

/** Human decisions take seconds to days: buckets from 5 s to a week. */
const DECISION_BUCKETS = [5, 30, 60, 300, 900, 1800, 3600, 4 * 3600, 12 * 3600, 86400, 7 * 86400];

/** The metrics of one bridge process. */
export class BridgeMetrics {
  /** The registry `/metrics` exposes. */
  readonly registry = new Registry();
  readonly #platformCalls: Counter<'platform' | 'outcome'>;
  readonly #decisionSeconds: Histogram<'answer'>;
  readonly #stepSeconds: Histogram<'outcome'>;

  constructor(options: BridgeMetricsOptions) {
    const registers = [this.registry];
    this.#platformCalls = new Counter({
      name: 'phasebridge_platform_api_calls_total',
      help: 'Calls to chat platform APIs, by platform and outcome (rate_limited = HTTP 429)',
      labelNames: ['platform', 'outcome'],
      registers,
    });
    this.#decisionSeconds = new Histogram({
      name: 'phasebridge_checkpoint_decision_seconds',
      help: 'Time from a checkpoint opening to its decision, by answer',
      labelNames: ['answer'],
      buckets: DECISION_BUCKETS,
      registers,
    });
    this.#stepSeconds = new Histogram({
      name: 'phasebridge_step_duration_seconds',
      help: 'Duration of agent step attempts, by outcome (completed or failed)',
      labelNames: ['outcome'],
      buckets: STEP_BUCKETS,
      registers,
    });
    countGauge('phasebridge_runs', 'Runs by status', 'status', options.runsByStatus, options.log);
    countGauge('phasebridge_jobs', 'Jobs by state', 'state', options.jobsByState, options.log);
    countGauge(
      'phasebridge_workers',
      'Job workers with a live heartbeat, by kind (worker = phasebridge worker, bridge = in-process)',
      'kind',
      options.workersByKind,
      options.log,
    );
    countGauge(
      'phasebridge_worker_running_jobs',
      'Jobs running on registered workers, by kind',
      'kind',
      options.runningByKind,
      options.log,
    );
    if (options.info) {
      new Gauge({
        name: 'phasebridge_bridge_info',
        help: 'This bridge: its role (leader owns the platform connections), bridge.db dialect and job queue driver',
        labelNames: ['role', 'database', 'queue'],
        registers,
      }).set({ ...options.info }, 1);
    }
    const leaseAge = options.leaseAgeSeconds;
    if (leaseAge) {
      const log = options.log;
      new Gauge({
        name: 'phasebridge_leader_lease_age_seconds',
        help: 'Seconds since the leader lease was last renewed, as Redis says (absent: nobody holds it)',
        registers,
        async collect() {
          try {
            const age = await leaseAge();
            this.reset();
            if (age !== undefined) this.set(age);
          } catch (err) {
            log.warn({ err }, 'metrics: lease age not read');
          }
        },
      });
    }
    if (options.processMetrics ?? true) {
      collectDefaultMetrics({ register: this.registry, prefix: 'phasebridge_' });
    }

    function countGauge(
      name: string,
      help: string,
      label: string,
      collector: CountCollector | undefined,
      log: HttpLogger,
    ): void {
      if (!collector) return;
      new Gauge({
        name,
        help,
        labelNames: [label],
        registers,
        async collect() {
          try {
            const counts = await collector();
            this.reset();
            for (const [value, n] of Object.entries(counts)) this.set({ [label]: value }, n);
          } catch (err) {
            // Keep the last values: a failed count must not fail the whole scrape.
            log.warn({ err, metric: name }, 'metrics: collector failed');
          }
        },
      });
    }
  }

  /** Counts one platform API call. */
  platformCall(platform: string, outcome: PlatformCallOutcome): void {
    this.#platformCalls.inc({ platform, outcome });
  }

  /** Runs `call`, counting it as ok, rate_limited (RateLimitedError) or error. */
  async timePlatformCall<T>(platform: string, call: () => Promise<T>): Promise<T> {
    try {
      const result = await call();
      this.platformCall(platform, 'ok');
      return result;
    } catch (err) {
      this.platformCall(platform, err instanceof RateLimitedError ? 'rate_limited' : 'error');
      throw err;
    }
  }

  /** Records a checkpoint decision; times are ISO strings or Dates (as in CheckpointState). */
  checkpointDecided(answer: string, openedAt: string | Date, decidedAt: string | Date): void {
    const seconds = (new Date(decidedAt).getTime() - new Date(openedAt).getTime()) / 1000;
    if (Number.isFinite(seconds) && seconds >= 0)
      this.#decisionSeconds.observe({ answer }, seconds);
  }

  /** Records a finished step attempt; times as in StepState (ISO strings). */
  stepFinished(outcome: 'completed' | 'failed', startedAt: string, finishedAt: string): void {
    const seconds = (Date.parse(finishedAt) - Date.parse(startedAt)) / 1000;
    if (Number.isFinite(seconds) && seconds >= 0) this.#stepSeconds.observe({ outcome }, seconds);
  }

  /** The exposition text (Prometheus text format). */
  text(): Promise<string> {
    return this.registry.metrics();
  }

  /**
   * The `/metrics` handler. It carries no authentication of its own: wrap it with the web
   * console's session guard (the default wiring), or mount it bare only on a private address.
   */
  handler(): RequestHandler {
    return async (req: IncomingMessage, res: ServerResponse) => {
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        sendText(res, 405, 'method not allowed\n', { allow: 'GET, HEAD' });
        return;
      }
      const body = await this.text();
      res.writeHead(200, { ...BASE_HEADERS, 'content-type': this.registry.contentType });
      res.end(req.method === 'HEAD' ? undefined : body);
    };
  }
}

/** Compared as SHA-256 digests: equal lengths for timingSafeEqual, and no length leak. */
const digest = (text: string): Buffer => createHash('sha256').update(text).digest();

/**
 * `/metrics` for a scraper: `Authorization: Bearer <token>` passes when a token is configured
 * (constant-time compare); any other request goes through `fallback` (the console session).
 */
export function bearerOr(
  token: string | undefined,
  fallback: (handler: RequestHandler) => RequestHandler,
  handler: RequestHandler,
): RequestHandler {
  const guarded = fallback(handler);
  if (token === undefined) return guarded;
  const expected = digest(token);
  return async (req: IncomingMessage, res: ServerResponse) => {
    const m = /^Bearer +(\S+) *$/i.exec(req.headers.authorization ?? '');
    if (m && timingSafeEqual(digest(m[1]!), expected)) await handler(req, res);
    else await guarded(req, res);
  };
}
