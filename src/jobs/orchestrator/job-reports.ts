/**
 * What the queue hears of step jobs, from any worker process, turned into engine commands on
 * their runs: the agent's start and session reports, chain steps, progress lines, shipped log
 * chunks (git mode), and the job's outcome once its commit, if any, is landed.
 */
import type { RunState } from '../../engine/model.ts';
import type { Log } from '../../log.ts';
import type { JobOutcome, JobSpec } from '../queue/port.ts';
import { parseQueueStepId, parseStepReport } from './job-payload.ts';
import {
  chainCommands,
  type JobRef,
  outcomeCommands,
  type StartInfo,
  startedCommands,
} from './job-results.ts';
import type { JobSignals } from './job-signals.ts';
import { landJobOutcome } from './land-outcome.ts';
import { RemoteLogs } from './remote-log.ts';
import type { RunListeners } from './run-listeners.ts';

/** Applies a job's reports and outcome to its run (through JobSignals' retries). */
export class JobReports {
  readonly #signals: JobSignals;
  readonly #listeners: RunListeners;
  readonly #remoteLogs: RemoteLogs;
  readonly #workspaceOf: (runId: string) => Promise<string>;
  readonly #log: Log;

  constructor(deps: {
    signals: JobSignals;
    listeners: RunListeners;
    workspaceOf(runId: string): Promise<string>;
    log: Log;
  }) {
    this.#signals = deps.signals;
    this.#listeners = deps.listeners;
    this.#workspaceOf = deps.workspaceOf;
    this.#log = deps.log;
    this.#remoteLogs = new RemoteLogs({ workspaceOf: deps.workspaceOf, log: deps.log });
  }

  /**
   * A report of a running job, from any worker process. (The queue's own `onStarted`, a job
   * being taken, is not used: the agent's start report carries its session and registry ids.)
   */
  report(id: string, job: JobSpec, data: Record<string, unknown>): void {
    const report = parseStepReport(data);
    if (report?.kind === 'started') {
      const { kind: _kind, ...info } = report;
      if (info.pid !== undefined) this.#remoteLogs.started(job, info.pid);
      void this.#started(id, job, info);
    } else if (report?.kind === 'session') {
      const { kind: _kind, ...info } = report;
      void this.#started(id, job, { ...info, engine: true });
    } else if (report?.kind === 'chain') {
      const ref = refOf(id, job);
      const plan = (s: RunState) => chainCommands(s, ref, [report.index]);
      void this.#signals.apply(job.runId, `${id} chain ${report.index}`, plan);
    } else if (report?.kind === 'progress') {
      const { runId, stepId, attempt } = job;
      this.#listeners.progress({ runId, stepId, attempt, text: report.text });
    } else if (report?.kind === 'log') {
      this.#remoteLogs.write(job, { offset: report.offset, data: report.data });
    }
  }

  /** A job finished (or failed): its commit landed first, then its engine commands. */
  outcome(id: string, job: JobSpec, outcome: JobOutcome): void {
    const ref = refOf(id, job);
    const land = {
      workspaceOf: this.#workspaceOf,
      logsSettled: (runId: string) => this.#remoteLogs.settled(runId),
      log: this.#log,
    };
    void landJobOutcome(job, outcome, land).then((landed) =>
      this.#signals.apply(job.runId, `${id} finished`, (s) => outcomeCommands(s, ref, landed)),
    );
  }

  /** The agent of a step job started, or its engine announced a session: engine commands. */
  #started(id: string, job: JobSpec, info: StartInfo): Promise<void> {
    const ref = refOf(id, job);
    return this.#signals.apply(job.runId, `${id} started`, (s) => startedCommands(s, ref, info));
  }
}

function refOf(id: string, job: Pick<JobSpec, 'stepId' | 'attempt'>): JobRef {
  const { stepId, kind, taskId } = parseQueueStepId(job.stepId);
  return { id, stepId, attempt: job.attempt, kind, ...(taskId === undefined ? {} : { taskId }) };
}
