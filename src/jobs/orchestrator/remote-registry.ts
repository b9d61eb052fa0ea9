/**
 * The bridge's side of codemachine's `.codemachine/logs/registry.db` for jobs run by a worker
 * that does not share the workspace (git mode): that worker cannot reach the bridge's
 * registry.db, so the bridge registers the agent run when it queues the job (as CodeMachine's
 * `register` does before the agent runs) and hands the row id to the worker in the payload; the
 * worker reports it back as its monitoringId (start report, result), so the ledger's
 * sessionInitialized names this row. The agent's pid (from the start report) and the agent log
 * (from the shipped chunks, see remote-log.ts) are written by the bridge too; the final status,
 * error and telemetry come from the ledger's events, as for local steps (registry-projection.ts).
 * Every file is opened inside the workspace without following links (RegistryDb.open).
 */
import { agentLogPath } from '../../engine/layouts/codemachine/paths.ts';
import { RegistryDb } from '../../engine/layouts/codemachine/registry-db.ts';
import { layoutModule } from '../../engine/layouts/index.ts';
import { type RunState, stepJobId, triggerJobId } from '../../engine/model.ts';
import type { JobSpec } from '../queue/port.ts';
import type { EnqueueEffect } from './effects.ts';
import type { JobAgent } from './job-payload.ts';
import { parseQueueStepId } from './job-payload.ts';

/** The registry.db job id of a step or trigger job (`runId:stepId:attempt`, `…+trigger`). */
function registryJobId(
  kind: 'step' | 'trigger',
  runId: string,
  stepId: string,
  attempt: number,
): string {
  return (kind === 'trigger' ? triggerJobId : stepJobId)(runId, stepId, attempt);
}

/**
 * Registers the agent run of a git-mode codemachine step or trigger job about to be queued in
 * the bridge's registry.db; returns its id (the same one for the same job queued again), or
 * undefined for other jobs and layouts.
 */
export function registerRemoteRun(
  state: RunState,
  effect: EnqueueEffect,
  agent: JobAgent,
  prompt: string,
  now: Date = new Date(),
): number | undefined {
  if (layoutModule(state.layout)?.steps?.agentRegistry !== true) return undefined;
  if (effect.type === 'enqueueTask') return undefined;
  const kind = effect.type === 'enqueueTrigger' ? 'trigger' : 'step';
  const db = RegistryDb.open(state.workspace);
  try {
    return db.insert({
      jobId: registryJobId(kind, state.id, effect.stepId, effect.attempt),
      runId: state.id,
      stepId: effect.stepId,
      kind,
      attempt: effect.attempt,
      name: agent.name,
      engine: agent.engine,
      ...(agent.model === undefined ? {} : { model: agent.model }),
      start: now.toISOString(),
      prompt,
      status: 'running',
    });
  } finally {
    db.close();
  }
}

/** The registry row id the bridge gave a job (payload `monitoringId`), for codemachine jobs. */
export function remoteRowOf(job: Pick<JobSpec, 'payload'>): number | undefined {
  const { layout, monitoringId } = job.payload;
  if (typeof monitoringId !== 'number') return undefined;
  if (layoutModule(String(layout))?.steps?.agentRegistry !== true) return undefined;
  return monitoringId;
}

/**
 * The absolute `agent-<id>-<name>-<time>.log` of a job the bridge registered, or undefined when
 * the job has no row (another layout, a task, a row lost with a replaced registry.db).
 */
export function remoteAgentLog(
  workspace: string,
  job: Pick<JobSpec, 'runId' | 'stepId' | 'attempt' | 'payload'>,
): string | undefined {
  if (remoteRowOf(job) === undefined) return undefined;
  const { stepId, kind } = parseQueueStepId(job.stepId);
  if (kind === 'task') return undefined;
  const db = RegistryDb.open(workspace);
  try {
    const row = db.jobRow(registryJobId(kind, job.runId, stepId, job.attempt));
    return row === undefined ? undefined : agentLogPath(workspace, row.id, row.name, row.start);
  } finally {
    db.close();
  }
}

/** Records the agent process a remote worker started for a registered run. */
export function setRemotePid(workspace: string, id: number, pid: number): void {
  const db = RegistryDb.open(workspace);
  try {
    db.setPid(id, pid);
  } finally {
    db.close();
  }
}
