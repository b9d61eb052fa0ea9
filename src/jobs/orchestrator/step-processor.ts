/**
 * The worker side of a step job: payload (self-contained: the agent, the workspace reference)
 * → where it runs (shared path, or a git work folder) → files of the run's layout → runAgent →
 * (git mode: commit and push) → a JSON result the orchestrator turns into engine commands. Runs in the orchestrator's
 * process (in-process worker) or in a `phasebridge worker` process; it never writes the run's
 * ledger (the orchestrator does), only the step's logs and, for the codemachine layout, the
 * agent's row in `.codemachine/logs/registry.db` (as CodeMachine registers an agent before it runs).
 * While the agent runs it reports through the queue (any process hears it): `{kind: 'started'}`
 * once the agent process exists, `{kind: 'session'}` when the engine announces its own session
 * id, `{kind: 'chain', index}` per chained prompt done, `{kind: 'progress', text}` per
 * `::progress` line, and in git mode `{kind: 'log'}` chunks of the agent's output (the bridge
 * writes the run's log files from them, see remote-log.ts). A job taken again after its worker died, in a run that must not resume by
 * itself, is not run (see retakeRefused).
 */
import fs from 'node:fs';
import { agentLogPath } from '../../engine/layouts/codemachine/paths.ts';
import { RegistryDb } from '../../engine/layouts/codemachine/registry-db.ts';
import { layoutModule } from '../../engine/layouts/index.ts';
import { stepJobId, triggerJobId } from '../../engine/model.ts';
import { InvalidInputError } from '../../errors.ts';
import { markStage } from '../../trace.ts';
import type { GitWorkFolders } from '../git/worker-git.ts';
import type { Processor, ProgressReporter, QueuedJob } from '../queue/port.ts';
import { assertSupported, effectivePermissions } from '../runner/permissions.ts';
import { runAgent } from '../runner/run-agent.ts';
import { finishStepRecord, startStepRecord } from '../runner/step-record.ts';
import type { AgentDefinition, AgentInvocation, AgentOutcome } from '../runner/types.ts';
import { runChain } from './chain-runner.ts';
import { chainWithFeedback, runWithFeedback, withFeedback } from './feedback-run.ts';
import { definitionOfJob } from './job-agent.ts';
import {
  type JobTimings,
  parseStepJobPayload,
  type StepJobPayload,
  type StepJobResult,
  type StepReport,
  type StepStartInfo,
} from './job-payload.ts';
import { type JobPlace, prepareWorkspace, pushChanges } from './job-workspace.ts';
import { LogShipper } from './remote-log.ts';
import { runFiles, stepLogPath } from './run-files.ts';
import { taskDirectivePath, taskLogPath } from './task-jobs.ts';

/** What the step processor needs. */
export interface StepProcessorOptions {
  /**
   * Values of the agent's env names: the bridge's stored ones for its in-process worker. A
   * remote worker leaves it out; its agents inherit the worker's own environment.
   */
  agentEnv?(agentName: string): Promise<Record<string, string>>;
  /** This worker's clone cache and work folders (git-mode jobs fail clearly without). */
  workFolders?: GitWorkFolders;
  /** Reported in start reports and results (which worker ran a job); known once it started. */
  workerId?: () => string | undefined;
  /** Env names never passed to agents. */
  secretEnvNames?: readonly string[];
  /** SIGTERM → SIGKILL grace on timeout/cancel (runner default 5 s). */
  killGraceMs?: number;
  /** Agents run this much below our CPU priority (config PHASEBRIDGE_AGENT_NICE). */
  agentNice?: number;
  /** Environment agents inherit (default process.env). */
  baseEnv?: NodeJS.ProcessEnv;
  /** The agent process exists (diagnostics and benchmarks). */
  onSpawn?(job: QueuedJob, pid: number): void;
  /** How Claude starts the approval MCP server of `permissions: ask` (see AgentInvocation). */
  approvalServer?: AgentInvocation['approvalServer'];
  /** Where a failed progress or start report goes (it never fails the job). */
  onReportError?(err: unknown): void;
}

/** Characters of a `::progress` line passed on (it is shown live, not stored in the ledger). */
const PROGRESS_MAX = 500;

/** Where the agent of one job logs, and its registry id (codemachine). */
interface Placement {
  logFile: string;
  extraLogFiles: string[];
  monitoringId?: number;
}

/**
 * The registry.db of each workspace, kept open: opening it per job (WAL set-up, schema check,
 * a checkpoint on close) costs more than the rest of a job's start together.
 */
class Registries {
  readonly #open = new Map<string, RegistryDb>();

  /**
   * Records a codemachine agent run about to start, as CodeMachine's `register` does (the same
   * row for a redelivered job); returns its monitoringId and agent log path.
   */
  register(
    job: QueuedJob,
    p: StepJobPayload & { kind: 'step' | 'trigger' },
    agent: AgentDefinition,
    workspace: string,
  ) {
    let db = this.#open.get(workspace);
    if (db === undefined) {
      db = RegistryDb.open(workspace);
      this.#open.set(workspace, db);
    }
    const jobId = (p.kind === 'trigger' ? triggerJobId : stepJobId)(
      job.runId,
      p.stepId,
      job.attempt,
    );
    const id = db.insert({
      jobId,
      runId: job.runId,
      stepId: p.stepId,
      kind: p.kind,
      attempt: job.attempt,
      name: agent.name,
      engine: agent.engine,
      ...(agent.model === undefined ? {} : { model: agent.model }),
      start: new Date().toISOString(),
      prompt: p.prompt,
      status: 'running',
    });
    const row = db.jobRow(jobId)!;
    return { monitoringId: id, logPath: agentLogPath(workspace, id, row.name, row.start) };
  }

  /** Records the agent process of a registered run (best effort: the row is informational). */
  setPid(workspace: string, monitoringId: number, pid: number): void {
    try {
      this.#open.get(workspace)?.setPid(monitoringId, pid);
    } catch {
      // A busy or replaced registry must not fail a job whose agent already runs.
    }
  }

  close(): void {
    for (const db of this.#open.values()) db.close();
    this.#open.clear();
  }
}

/** Where the agent of a job logs (and, codemachine, its registry row). */
function place(
  registries: Registries,
  job: QueuedJob,
  p: StepJobPayload,
  agent: AgentDefinition,
  where: JobPlace,
): Placement {
  if (p.kind === 'task') {
    // A task's log is its own; the codemachine registry knows steps and triggers only.
    const logFile = taskLogPath(where.dir, job.runId, p.stepId, p.taskId!, job.attempt);
    return { logFile, extraLogFiles: [] };
  }
  const logFile = stepLogPath(where.dir, job.runId, p.stepId, job.attempt, p.kind);
  if (layoutModule(p.layout)?.steps?.agentRegistry !== true) return { logFile, extraLogFiles: [] };
  // The registry.db is the bridge's file: in git mode the bridge registered the row when it queued
  // the job (and writes the agent log from the shipped chunks); the worker only reports its id.
  if (where.remote) {
    const id = p.monitoringId;
    return { logFile, extraLogFiles: [], ...(id === undefined ? {} : { monitoringId: id }) };
  }
  const handle = registries.register(job, { ...p, kind: p.kind }, agent, where.dir);
  return { logFile, extraLogFiles: [handle.logPath], monitoringId: handle.monitoringId };
}

/**
 * A step job taken again after its worker died (its log exists: the first take opened it), in
 * a run with `resumeFromLastStep: false`: the result that blocks the run instead of re-running.
 */
function retakeRefused(job: QueuedJob, p: StepJobPayload, dir: string): StepJobResult | null {
  if (p.kind !== 'step' || p.noResume !== true) return null;
  const logFile = stepLogPath(dir, job.runId, p.stepId, job.attempt, p.kind);
  if (!fs.existsSync(logFile)) return null;
  try {
    fs.appendFileSync(
      logFile,
      `[phasebridge] ${new Date().toISOString()} taken again after its worker was lost; not run (resumeFromLastStep: false)\n`,
    );
  } catch {
    // The note is for humans reading the log; the result carries the fact.
  }
  const failure = 'interrupted: its worker was lost and the run does not resume by itself';
  return {
    ok: false,
    exitCode: null,
    signal: null,
    timedOut: false,
    cancelled: false,
    failure,
    directive: null,
    telemetry: { tokensIn: 0, tokensOut: 0, cachedTokens: 0, costUsd: 0 },
    outputTail: [],
    durationMs: 0,
    sessionId: job.id,
    interrupted: true,
    logFile,
  };
}

/**
 * The agent with the posture this step runs with (step over agent over default), checked: the
 * engine must support it, and `full` must be allowed in the workspace by an admin.
 */
function withPosture(agent: AgentDefinition, p: StepJobPayload): AgentDefinition {
  const permissions = effectivePermissions(p.permissions, agent.permissions, p.stepId, agent.name);
  assertSupported(agent.engine, permissions, `step ${p.stepId} (agent ${agent.name})`);
  // Whether `full` is allowed is bridge.db's to say: the bridge checked it when it queued the job.
  if (permissions.posture === 'full' && p.fullAllowed !== true) {
    const ws = p.workspace.path;
    throw new InvalidInputError(
      `step ${p.stepId} asks for permissions: full, which is not allowed in ${ws} — fix: an admin runs \`phasebridge agents allow-full ${ws}\` (or give the step read-only or edit)`,
    );
  }
  return { ...agent, permissions };
}

/** Sends a report through the queue (never throws: reporting must not break the step). */
function send(report: ProgressReporter, data: StepReport, onError: (err: unknown) => void): void {
  try {
    report({ ...data });
  } catch (err) {
    onError(err); // best effort by contract; the job's outcome carries the start too
  }
}

/** A queue Processor for step and trigger jobs; `close` once its worker has stopped. */
export interface StepProcessor {
  processor: Processor;
  /** Closes the registry.db handles it keeps open. */
  close(): void;
}

/** Creates the processor that runs step and trigger jobs with the agent runner. */
export function createStepProcessor(opts: StepProcessorOptions): StepProcessor {
  const onError = opts.onReportError ?? (() => {});
  const registries = new Registries();
  const processor: Processor = async (job, signal, report) => {
    const timings: JobTimings = { picked: Date.now() };
    const p = parseStepJobPayload(job.payload);
    if (p.problem !== undefined) throw new Error(p.problem);
    const where = await prepareWorkspace(job, p, opts.workFolders);
    timings.ready = Date.now();
    // The bridge's path of the log: the same file in shared mode, written by the bridge in git mode.
    const bridgeLog =
      p.kind === 'task'
        ? taskLogPath(p.workspace.path, job.runId, p.stepId, p.taskId!, job.attempt)
        : stepLogPath(p.workspace.path, job.runId, p.stepId, job.attempt, p.kind);
    const retaken = retakeRefused(job, p, where.dir);
    if (retaken !== null) return { ...retaken, logFile: bridgeLog };
    const agent = withPosture(
      definitionOfJob(p.agent, (await opts.agentEnv?.(p.agent.name)) ?? {}),
      p,
    );
    const placement = place(registries, job, p, agent, where);
    markStage(job.runId, 'placed');
    const shipper = where.remote
      ? new LogShipper(placement.logFile, (chunk) =>
          send(report, { kind: 'log', ...chunk }, onError),
        )
      : null;
    let outcome: AgentOutcome;
    let completed: number[] | undefined;
    // In a git workspace the bridge reads, what the step changed is saved beside its log (the
    // console's diff); a remote work folder's diff would not reach the bridge.
    // And the changed-files list of the checkpoint message (git mode: the push reports it).
    const record = p.kind === 'step' && !where.remote ? await startStepRecord(where.dir) : null;
    try {
      const run = await runIn(
        job,
        p,
        agent,
        placement,
        where.dir,
        signal,
        report,
        opts,
        registries,
        timings,
      );
      timings.agentEnd = Date.now();
      outcome = run.outcome;
      completed = run.completed;
    } finally {
      shipper?.stop();
    }
    if (record !== null) {
      const at = { workspace: where.dir, logFile: placement.logFile, stepId: p.stepId };
      await finishStepRecord(record, { ...at, attempt: job.attempt });
    }
    const result: StepJobResult = {
      ok: outcome.ok,
      exitCode: outcome.exitCode,
      signal: outcome.signal,
      timedOut: outcome.timedOut,
      cancelled: outcome.cancelled,
      directive: outcome.directive,
      telemetry: outcome.telemetry,
      outputTail: outcome.outputTail,
      durationMs: outcome.durationMs,
      sessionId: job.id,
      logFile: bridgeLog,
    };
    if (outcome.failure !== undefined) result.failure = outcome.failure;
    if (outcome.engineSessionId !== undefined) result.engineSessionId = outcome.engineSessionId;
    if (completed !== undefined) result.completedChains = completed;
    if (placement.monitoringId !== undefined) result.monitoringId = placement.monitoringId;
    const worker = opts.workerId?.();
    if (worker !== undefined) result.worker = worker;
    if (where.remote && p.workspace.mode === 'git' && outcome.ok) {
      await pushChanges(result, where.dir, job, p, opts.workFolders!, timings);
    }
    result.timings = timings;
    return { ...result };
  };
  return { processor, close: () => registries.close() };
}

/** Runs the agent (or its chain) of a job in `dir`, reporting through the queue. */
async function runIn(
  job: QueuedJob,
  p: StepJobPayload,
  agent: AgentDefinition,
  placement: Placement,
  dir: string,
  signal: AbortSignal,
  report: ProgressReporter,
  opts: StepProcessorOptions,
  registries: Registries,
  timings: JobTimings,
): Promise<{ outcome: AgentOutcome; completed?: number[] }> {
  const onError = opts.onReportError ?? (() => {});
  const info: StepStartInfo = { sessionId: job.id };
  const worker = opts.workerId?.();
  if (worker !== undefined) info.worker = worker;
  if (placement.monitoringId !== undefined) info.monitoringId = placement.monitoringId;
  const files = runFiles(dir, p.layout, job.runId);
  if (p.kind === 'task') {
    // Parallel task agents must not share one directive file.
    files.directiveFile = taskDirectivePath(dir, job.runId, p.stepId, p.taskId!);
  }
  const inv: AgentInvocation = {
    runId: job.runId,
    stepId: p.stepId,
    attempt: job.attempt,
    workspace: dir,
    prompt: p.prompt,
    specFile: files.specFile,
    directiveFile: files.directiveFile,
    logFile: placement.logFile,
    extraLogFiles: placement.extraLogFiles,
    logPrompt: layoutModule(p.layout)?.steps?.logsPrompt === true,
    timeoutMs: p.timeoutMs ?? agent.timeoutMs ?? 0,
    signal,
    ...(opts.killGraceMs === undefined ? {} : { killGraceMs: opts.killGraceMs }),
    ...(opts.agentNice === undefined ? {} : { nice: opts.agentNice }),
    ...(opts.baseEnv === undefined ? {} : { baseEnv: opts.baseEnv }),
    ...(opts.secretEnvNames === undefined ? {} : { secretEnvNames: opts.secretEnvNames }),
    ...(opts.approvalServer === undefined ? {} : { approvalServer: opts.approvalServer }),
    onSpawn: (pid) => {
      timings.agentStart ??= Date.now();
      opts.onSpawn?.(job, pid);
      if (placement.monitoringId !== undefined) {
        registries.setPid(dir, placement.monitoringId, pid);
      }
      if (p.kind !== 'trigger') send(report, { kind: 'started', ...info, pid }, onError);
    },
    onSession: (engineSessionId) => {
      if (p.kind === 'step')
        send(report, { ...info, kind: 'session', sessionId: engineSessionId }, onError);
    },
    onProgress: (text) =>
      send(report, { kind: 'progress', text: text.slice(0, PROGRESS_MAX) }, onError),
  };
  if (p.kind !== 'step') return { outcome: await runAgent(agent, inv) };
  if (p.chain !== undefined) {
    const fed = withFeedback(agent, inv, p);
    const chained = await runChain(
      fed.agent,
      fed.inv,
      chainWithFeedback(p),
      p.chainsDone ?? [],
      (index) => send(report, { kind: 'chain', index }, onError),
    );
    return { outcome: chained.outcome, completed: chained.completed };
  }
  return { outcome: await runWithFeedback(agent, inv, p) };
}
