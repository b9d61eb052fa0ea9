/**
 * Liveness and readiness. `/healthz` answers 200 while the process serves HTTP at all;
 * `/readyz` runs every named probe (bridge.db, the queue, each chat adapter) and answers 503
 * when one fails or does not answer in time. Both are public: they reveal probe names, error
 * codes and the short `detail` a probe chose to publish (an adapter's last start error, already
 * stripped of secrets); everything else goes to the log.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ConflictError, PhasebridgeError } from '../errors.ts';
import { sendJson, sendText } from './respond.ts';
import type { HttpLogger, Route } from './server.ts';

/**
 * A readiness check: resolving means ready, unless it resolves with `false` or a {@link NotReady};
 * a rejection = not ready. A {@link ReadyWithNote} is ready with a detail shown.
 */
export type ProbeCheck = () => Promise<unknown>;

/** What a probe resolves with to say "not ready" and why; `detail` is shown in `/readyz`. */
export interface NotReady {
  readonly ready: false;
  readonly detail: string;
}

/** What a probe resolves with to stay ready but say something in `/readyz` (unreachable chats). */
export interface ReadyWithNote {
  readonly ready: true;
  readonly detail: string;
}

function isReadyWithNote(v: unknown): v is ReadyWithNote {
  return typeof v === 'object' && v !== null && (v as ReadyWithNote).ready === true;
}

function isNotReady(v: unknown): v is NotReady {
  return typeof v === 'object' && v !== null && (v as NotReady).ready === false;
}

/** The outcome of one probe. */
export interface ProbeResult {
  readonly name: string;
  readonly ok: boolean;
  /** 'timeout', 'not ready', a phasebridge error code, or 'error'. */
  readonly error?: string;
  /** Why, when the probe said so with a {@link NotReady} (or a note of a {@link ReadyWithNote}). */
  readonly detail?: string;
}

/** What `/readyz` reports. */
export interface ReadinessReport {
  readonly ready: boolean;
  readonly checks: readonly ProbeResult[];
}

/** The named probes `/readyz` runs; adapters add theirs as they are started. */
export class Readiness {
  readonly #probes = new Map<string, ProbeCheck>();
  /** Probes failing now, with how: a repeat is not logged at warn again. */
  readonly #failing = new Map<string, string>();
  readonly #timeoutMs: number;
  readonly #log: HttpLogger;

  /** `timeoutMs` bounds each probe (default 2000 ms). */
  constructor(log: HttpLogger, timeoutMs = 2000) {
    this.#log = log;
    this.#timeoutMs = timeoutMs;
  }

  /** Adds a probe; names are unique (ConflictError). */
  add(name: string, check: ProbeCheck): void {
    if (this.#probes.has(name)) throw new ConflictError(`readiness probe "${name}" exists`);
    this.#probes.set(name, check);
  }

  /** Removes a probe (an adapter that was stopped on purpose). */
  remove(name: string): void {
    this.#probes.delete(name);
  }

  /** Runs every probe concurrently, each bounded by the timeout. */
  async check(): Promise<ReadinessReport> {
    const checks = await Promise.all(
      [...this.#probes].map(([name, check]) => this.#run(name, check)),
    );
    return { ready: checks.every((c) => c.ok), checks };
  }

  async #run(name: string, check: ProbeCheck): Promise<ProbeResult> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), this.#timeoutMs);
    });
    try {
      const outcome = await Promise.race([Promise.resolve().then(check), timeout]);
      if (outcome === 'timeout') return this.#failed(name, 'timeout');
      if (isNotReady(outcome)) return this.#failed(name, 'not ready', outcome.detail);
      if (outcome === false) return this.#failed(name, 'not ready');
      this.#failing.delete(name);
      if (isReadyWithNote(outcome)) return { name, ok: true, detail: outcome.detail };
      return { name, ok: true };
    } catch (err) {
      this.#log.warn({ err, probe: name }, 'readiness probe failed');
      return { name, ok: false, error: err instanceof PhasebridgeError ? err.code : 'error' };
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Logs a failing probe at warn when it starts failing (or fails differently), at debug while it
   * keeps failing the same way: every /readyz poll must not repeat the line.
   */
  #failed(name: string, error: string, detail?: string): ProbeResult {
    const again = this.#failing.get(name) === error;
    this.#failing.set(name, error);
    const fields = { probe: name, error, detail };
    if (!again) this.#log.warn(fields, 'readiness probe failed');
    else this.#log.debug?.(fields, 'readiness probe failed');
    return { name, ok: false, error, ...(detail !== undefined ? { detail } : {}) };
  }
}

function onlyGet(req: IncomingMessage, res: ServerResponse): boolean {
  if (req.method === 'GET' || req.method === 'HEAD') return true;
  sendText(res, 405, 'method not allowed\n', { allow: 'GET, HEAD' });
  return false;
}

/**
 * The `/healthz` and `/readyz` routes (public, GET/HEAD only). With `role` (several `serve` with
 * a leader lease), `/readyz` says `leader` or `standby`, and `/readyz?role=leader` answers 503 on
 * a standby: a load balancer sends webhooks only to the leader.
 */
export function healthRoutes(readiness: Readiness, role?: () => string): Route[] {
  return [
    {
      prefix: '/healthz',
      handler: (req, res) => {
        if (onlyGet(req, res)) sendJson(res, 200, { status: 'ok' });
      },
    },
    {
      prefix: '/readyz',
      handler: async (req, res) => {
        if (!onlyGet(req, res)) return;
        const report = await readiness.check();
        const now = role?.();
        const wanted = new URL(req.url ?? '/', 'http://x').searchParams.get('role');
        const ok = report.ready && (wanted === null || wanted === now);
        sendJson(res, ok ? 200 : 503, {
          status: report.ready ? 'ready' : 'not ready',
          ...(now !== undefined ? { role: now } : {}),
          checks: report.checks,
        });
      },
    },
  ];
}
