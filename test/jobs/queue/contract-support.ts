/**
 * What the job queue contract's cases share (contract.ts): the harness a driver's test file gives,
 * a step spec, waiting and outcome recording, a processor that holds jobs and checks the limits,
 * and the context that opens queues and worker processes for a case and cleans them up.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  type JobOutcome,
  type JobQueue,
  type JobSpec,
  laneOf,
  type Processor,
  type QueuedJob,
} from '../../../src/jobs/queue/port.ts';
import { bundled } from '../../support/bundle.ts';
import { slow } from '../../support/slowdown.ts';
import { type OpenedQueue, openTestQueue, type TestQueueConfig } from './fixtures/queue-config.ts';

/** What a driver's test file provides: configurations over one fresh backing store. */
export interface QueueHarness {
  /** Options of a queue over the store; `maxLostRetries` tunes crash retries. */
  config(overrides?: { maxLostRetries?: number }): TestQueueConfig;
  /** How long a live worker's job must stay untouched before we kill it (> one lease). */
  readonly leaseWaitMs: number;
  /** Removes the store. */
  dispose(): Promise<void>;
}

const WORKER_CHILD = fileURLToPath(new URL('./fixtures/worker-child.ts', import.meta.url));

/** A step spec with a flow-style run id. */
export const step = (
  run: string,
  stepId = 'build',
  payload: Record<string, unknown> = {},
): JobSpec => ({
  runId: `2026-11-29T143000Z-${run}`,
  stepId,
  attempt: 1,
  payload,
});

/** Polls `check` until true; fails with `what` after `timeoutMs`. */
export async function waitUntil(
  check: () => boolean,
  what: string,
  timeoutMs = 10_000,
): Promise<void> {
  const deadline = Date.now() + slow(timeoutMs);
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Resolves after `ms`. */
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Records every outcome a queue reports. */
export function collectOutcomes(queue: JobQueue) {
  const outcomes = new Map<string, JobOutcome>();
  const specs = new Map<string, JobSpec>();
  const counts = new Map<string, number>();
  queue.onOutcome((id, job, outcome) => {
    outcomes.set(id, outcome);
    specs.set(id, job);
    counts.set(id, (counts.get(id) ?? 0) + 1);
  });
  return {
    outcomes,
    specs,
    counts,
    async of(id: string): Promise<JobOutcome> {
      await waitUntil(() => outcomes.has(id), `the outcome of ${id}`);
      return outcomes.get(id) as JobOutcome;
    },
  };
}

/** Records started/progress signals and outcomes of a queue, in the order they arrive. */
export function collectSignals(queue: JobQueue) {
  const events: string[] = [];
  const specs: JobSpec[] = [];
  queue.onStarted((id, job) => {
    events.push(`started ${id}`);
    specs.push(job);
  });
  queue.onProgress((id, _job, data) => events.push(`progress ${id} ${JSON.stringify(data)}`));
  queue.onOutcome((id, _job, outcome) => events.push(`outcome ${id} ${outcome.ok}`));
  return { events, specs };
}

/**
 * A processor that holds each job until released and checks, at every start, the limits the
 * queue promises: no more than `concurrency` at once, never two jobs of one lane (a run, or one
 * task of a run's `tasks` step).
 */
export class Tracker {
  readonly calls = new Map<string, number>();
  readonly startedAt = new Map<string, number>();
  readonly violations: string[] = [];
  maxActive = 0;
  private readonly active = new Set<QueuedJob>();
  private readonly gates = new Map<string, () => void>();
  private holding = true;

  constructor(private readonly concurrency: number) {}

  readonly processor: Processor = async (job, signal) => {
    this.calls.set(job.id, (this.calls.get(job.id) ?? 0) + 1);
    for (const other of this.active) {
      if (laneOf(other) === laneOf(job)) this.violations.push(`${job.id} overlaps ${other.id}`);
    }
    this.active.add(job);
    if (this.active.size > this.concurrency)
      this.violations.push(`${this.active.size} jobs at once`);
    this.maxActive = Math.max(this.maxActive, this.active.size);
    this.startedAt.set(job.id, Date.now());
    try {
      if (this.holding || job.payload.hold === true) {
        await new Promise<void>((resolve, reject) => {
          this.gates.set(job.id, resolve);
          signal.addEventListener('abort', () => reject(new Error('agent killed')));
        });
      }
      if (typeof job.payload.fail === 'string') throw new Error(job.payload.fail);
      return { echo: job.payload, id: job.id };
    } finally {
      this.active.delete(job);
    }
  };

  started(id: string): boolean {
    return this.startedAt.has(id);
  }

  async waitStarted(id: string): Promise<void> {
    await waitUntil(() => this.started(id), `${id} to start`);
  }

  release(id: string): void {
    this.gates.get(id)?.();
    this.gates.delete(id);
  }

  /** Releases every held job and stops holding new ones (except payload.hold). */
  releaseAll(): void {
    this.holding = false;
    for (const id of [...this.gates.keys()]) this.release(id);
  }
}

/** Queues, child processes and files of one test, all cleaned up after it. */
export class TestContext {
  readonly dir = mkdtempSync(join(tmpdir(), 'pb-queue-'));
  private readonly opened: OpenedQueue[] = [];
  private readonly children: ChildProcess[] = [];
  readonly trackers: Tracker[] = [];

  constructor(readonly harness: QueueHarness) {}

  async open(overrides?: { maxLostRetries?: number }): Promise<JobQueue> {
    const opened = await openTestQueue(this.harness.config(overrides));
    this.opened.push(opened);
    return opened.queue;
  }

  tracker(concurrency: number): Tracker {
    const tracker = new Tracker(concurrency);
    this.trackers.push(tracker);
    return tracker;
  }

  /** Starts fixtures/worker-child.ts and waits until its worker runs (after `startWhen` exists). */
  async spawnWorker(
    mode: 'hang' | 'complete' | 'report',
    log: string,
    opts: { maxLostRetries?: number; startWhen?: string } = {},
  ) {
    const { startWhen, ...overrides } = opts;
    const config = JSON.stringify(this.harness.config(overrides));
    const args = [config, mode, log, ...(startWhen === undefined ? [] : [startWhen])];
    // Bundled once (test/support/bundle.ts): tsx would compile the worker again at every start.
    const child = spawn(process.execPath, [bundled(WORKER_CHILD), ...args], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    this.children.push(child);
    await new Promise<void>((resolve, reject) => {
      let out = '';
      child.stdout?.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        if (out.includes('ready\n')) resolve();
      });
      child.once('exit', (code) => reject(new Error(`worker child exited early (${code})`)));
    });
    return child;
  }

  async dispose(): Promise<void> {
    for (const child of this.children) child.kill('SIGKILL');
    for (const tracker of this.trackers) tracker.releaseAll();
    for (const opened of this.opened.reverse()) await opened.close();
    await this.harness.dispose();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** The non-empty lines of a log file a worker child wrote. */
export const logLines = (file: string) => readFileSync(file, 'utf8').split('\n').filter(Boolean);
