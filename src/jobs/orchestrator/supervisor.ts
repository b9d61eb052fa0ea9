/**
 * What a running bridge watches between commits, for unfinished runs only (cost grows with
 * active work, not history):
 * - template.json of codemachine runs, checked every tick: a hand edit is applied while the run
 *   is running or waiting, not at the next command; an unreadable file is told to the run's chats
 *   once (progress is never reset).
 * - the job of each active run's running step, checked every `leaseCheckMs`: a job the queue no
 *   longer knows (Redis restarted empty) is recovered after two checks in a row (the step runs
 *   again); an outcome that never reached us is applied. A step that never started and whose
 *   job the queue never got (its enqueue was cut off: an old leader's Redis gone silent) gets
 *   that very job enqueued at once (requeue.ts): nothing of it ran, so nothing runs twice. So
 *   does a queued task's job or a trigger's that the queue never got.
 * One run's failure is logged and reported; it never stops the checks of the others.
 */
import fs from 'node:fs';
import type { RunsRepo } from '../../db/repositories/runs.ts';
import { layoutModule } from '../../engine/layouts/index.ts';
import type { HandEditHooks } from '../../engine/layouts/module.ts';
import type { RunState } from '../../engine/model.ts';
import type { Log } from '../../log.ts';
import { errorMessage } from '../queue/outcome.ts';
import type { JobQueue } from '../queue/port.ts';
import { applyHandEdit } from './hand-edits.ts';
import { outcomeCommands } from './job-results.ts';
import { inFlightJob, interruptedCommands } from './reconcile.ts';
import { requeueUnstarted } from './requeue.ts';
import type { RunDriver } from './run-driver.ts';
import { isRunLockConflict } from './run-stores.ts';
import { inFlightTaskJobs } from './task-jobs.ts';
import type { RunNotice } from './types.ts';

/** What the supervisor needs. */
export interface SupervisorDeps {
  runs: RunsRepo;
  driver: RunDriver;
  queue: JobQueue;
  log: Log;
  notice(n: RunNotice): void;
  /** Tick interval: template.json checks (default 500 ms). */
  intervalMs?: number;
  /** Interval of the running-job checks (default 10 s; a lease is 30 s). */
  leaseCheckMs?: number;
}

/** A job found missing once: recovered when still missing at the next check. */
interface Suspect {
  jobId: string;
  seq: number;
}

/** Watches unfinished runs for hand edits and lost jobs. */
export class RunSupervisor {
  readonly #deps: SupervisorDeps;
  /** Per run, the template.json signature last looked at. */
  readonly #seen = new Map<string, string>();
  /** Per run, the problem last told to its chats (told once per distinct problem). */
  readonly #told = new Map<string, string>();
  readonly #suspects = new Map<string, Suspect>();
  #timer: NodeJS.Timeout | undefined;
  #lastLeaseCheck = 0;
  #ticking: Promise<void> | null = null;
  #closed = false;

  constructor(deps: SupervisorDeps) {
    this.#deps = deps;
  }

  /** Starts the periodic checks. */
  start(): void {
    this.#lastLeaseCheck = Date.now();
    this.#timer = setInterval(() => {
      this.#ticking ??= this.tick().finally(() => {
        this.#ticking = null;
      });
    }, this.#deps.intervalMs ?? 500);
    this.#timer.unref();
  }

  /** Makes the next tick look at the run's template.json again (a commit found an edit). */
  nudge(runId: string): void {
    this.#seen.delete(runId);
  }

  /** Stops the checks and waits for the one in progress. */
  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#timer);
    await this.#ticking;
  }

  /** One round of checks (exposed for tests and for a nudge after a hand-edit hook). */
  async tick(): Promise<void> {
    const runs = await this.#deps.runs.list({ status: ['active', 'awaiting', 'blocked'] });
    const leaseDue = Date.now() - this.#lastLeaseCheck >= (this.#deps.leaseCheckMs ?? 10_000);
    if (leaseDue) this.#lastLeaseCheck = Date.now();
    const live = new Set(runs.map((r) => r.id));
    for (const map of [this.#seen, this.#told, this.#suspects]) {
      for (const id of map.keys()) if (!live.has(id)) map.delete(id);
    }
    for (const run of runs) {
      if (this.#closed) return;
      const edits = layoutModule(run.layout)?.handEdits;
      if (edits !== undefined) await this.#checkTemplate(run.id, run.workspace, edits);
      if (leaseDue && run.status === 'active') await this.#checkJob(run.id);
    }
  }

  async #checkTemplate(runId: string, workspace: string, edits: HandEditHooks): Promise<void> {
    let signature: string;
    try {
      signature = fileSignature(edits.watchedFile(workspace));
    } catch (err) {
      return this.#tell(runId, `template.json cannot be checked: ${errorMessage(err)}`);
    }
    if (this.#seen.get(runId) === signature) return;
    try {
      const r = await applyHandEdit(this.#deps.driver, runId, this.#deps.log);
      this.#seen.set(runId, signature);
      if (r.kind === 'unreadable' || r.kind === 'ignored') this.#tell(runId, r.text);
      else this.#told.delete(runId);
    } catch (err) {
      // Another process drives the run: its next command takes the edit.
      if (isRunLockConflict(err)) return;
      this.#seen.set(runId, signature);
      this.#tell(runId, `template.json edit not applied: ${errorMessage(err)}`);
    }
  }

  async #checkJob(runId: string): Promise<void> {
    const { driver, queue, log } = this.#deps;
    try {
      const state = await driver.peek(runId);
      await this.#requeueTasks(state);
      const job = inFlightJob(state);
      const status = job === null ? null : await queue.get(job.id);
      if (job === null || status?.state === 'waiting' || status?.state === 'active') {
        this.#suspects.delete(runId);
        return;
      }
      if (status?.outcome && status.state !== 'cancelled') {
        const outcome = status.outcome;
        log.info({ runId, jobId: job.id }, 'applying a job outcome that was not reported');
        await driver.commitPlanned(runId, (s) => outcomeCommands(s, job, outcome));
        return;
      }
      if (status === null && (await requeueUnstarted(this.#deps, state, job)) !== 'not-mine') {
        this.#suspects.delete(runId);
        return;
      }
      const suspect = this.#suspects.get(runId);
      if (suspect?.jobId !== job.id || suspect.seq !== state.seq) {
        this.#suspects.set(runId, { jobId: job.id, seq: state.seq });
        return;
      }
      this.#suspects.delete(runId);
      log.warn({ runId, jobId: job.id }, 'the job of a running step vanished; recovering');
      this.#deps.notice({
        runId,
        text: `Run ${runId}: the job of step ${job.stepId} was lost by the queue; recovering it.`,
      });
      await driver.commitPlanned(runId, (s) => interruptedCommands(s, job));
    } catch (err) {
      if (isRunLockConflict(err)) return;
      log.warn({ runId, err: errorMessage(err) }, 'checking the running job failed');
    }
  }

  /** A task job the ledger queued that never reached the queue (a commit that landed late). */
  async #requeueTasks(state: RunState): Promise<void> {
    for (const job of inFlightTaskJobs(state)) {
      if ((await this.#deps.queue.get(job.id)) === null)
        await requeueUnstarted(this.#deps, state, job);
    }
  }

  /** Tells the run's chats about a problem, once per distinct text. */
  #tell(runId: string, text: string): void {
    if (this.#told.get(runId) === text) return;
    this.#told.set(runId, text);
    this.#deps.log.warn({ runId, problem: text }, 'run needs attention');
    this.#deps.notice({ runId, text: `Run ${runId}: ${text}` });
  }
}

/** What changes when a file is written, replaced or removed (a symlink is reported, not followed). */
function fileSignature(file: string): string {
  let st: fs.Stats;
  try {
    st = fs.lstatSync(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 'missing';
    throw err;
  }
  if (st.isSymbolicLink())
    throw new Error(`refusing to follow the symlink ${file} planted in the workspace`);
  return `${st.ino}:${st.size}:${st.mtimeMs}`;
}
