/**
 * Folds a run's events into registry.db: a row per step attempt (running → completed | failed |
 * skipped; a pause ends it `failed` with the pause as its error and pause_count 1), a row per trigger sub-agent (child of its step's row), and a `skipped` row
 * for a step skipped before it ran. Rows are history: loops and reverts never delete them.
 *
 * Exactly once: each run's last applied ledger seq is stored in the same transaction as the rows,
 * so events the store hands over again after a crash are skipped; a registry behind the events
 * (deleted, replaced after a failure) catches up from the run's history.
 */
import type { RunEvent } from '../../events.ts';
import { type RunState, stepJobId, triggerJobId } from '../../model.ts';
import type { AgentInfoLookup } from './agent-config.ts';
import type { NewAgentRun, RegistryDb } from './registry-db.ts';

/** What the fold needs besides the events. */
export interface RegistryFoldContext {
  /** The run's state after the events (for step prompts, agents and the run id). */
  state: RunState;
  /** Engine/model of named agents, when known. */
  agentInfo?: AgentInfoLookup;
  /** Every event of the run up to `state.seq`, to catch up a registry that lost some. */
  history?: () => readonly RunEvent[];
}

/** Applies the events not yet in `db`; `events` end at `ctx.state.seq`. */
export function applyRegistryEvents(
  db: RegistryDb,
  given: readonly RunEvent[],
  ctx: RegistryFoldContext,
): void {
  const { state } = ctx;
  let events = given;
  db.transaction(() => {
    let applied = db.watermark(state.id);
    if (applied > state.seq) {
      // Ahead of the ledger (a repair cut it back): its rows stay as history, new events apply.
      db.setWatermark(state.id, state.seq);
      applied = state.seq;
    }
    let firstSeq = state.seq - events.length + 1;
    if (applied < firstSeq - 1 && ctx.history) {
      events = ctx.history().slice(applied);
      firstSeq = applied + 1;
    }
    // A pause or a skip cancels the running attempt first, in the same commit: the cancel then
    // shows as a pause, or is left to the skip, rather than as a plain cancellation.
    const batch: Batch = {
      pausing: events.some((e) => e.type === 'runBlocked' && e.kind === 'paused'),
      skipping: new Set(events.flatMap((e) => (e.type === 'stepSkipped' ? [e.stepId] : []))),
      sessionIds: sessionIdsOfStarts(events),
    };
    events.forEach((event, i) => {
      const seq = firstSeq + i;
      if (seq > applied) applyOne(db, event, { seq, index: i }, ctx, batch);
    });
    if (state.seq > applied) db.setWatermark(state.id, state.seq);
  });
}

/** What the other events of the same batch tell about one event. */
interface Batch {
  /** A pause: a cancelled attempt is recorded as paused (failed, pause_count 1). */
  pausing: boolean;
  /** Steps skipped: their cancelled attempt is ended by the skip. */
  skipping: ReadonlySet<string>;
  /** Index of a stepStarted event → the monitoringId its session got later in the batch. */
  sessionIds: ReadonlyMap<number, number>;
}

/**
 * Pairs each stepStarted with the sessionInitialized that follows it for the same step, so a
 * rebuild (the whole ledger in one batch) creates each row with the id template.json names.
 */
function sessionIdsOfStarts(events: readonly RunEvent[]): Map<number, number> {
  const ids = new Map<number, number>();
  const started = new Map<string, number>();
  events.forEach((e, i) => {
    if (e.type === 'stepStarted') started.set(e.stepId, i);
    if (e.type !== 'sessionInitialized') return;
    const at = started.get(e.stepId);
    if (at !== undefined) ids.set(at, e.monitoringId);
    started.delete(e.stepId);
  });
  return ids;
}

function newRun(
  ctx: RegistryFoldContext,
  stepId: string,
  fields: Pick<NewAgentRun, 'jobId' | 'kind' | 'attempt' | 'status' | 'start'> &
    Partial<NewAgentRun>,
): NewAgentRun {
  const index = ctx.state.workflow.steps.findIndex((s) => s.id === stepId);
  const def = ctx.state.workflow.steps[index];
  const name = fields.name ?? def?.agent ?? stepId;
  const info = ctx.agentInfo?.(name);
  const run: NewAgentRun = {
    runId: ctx.state.id,
    stepId,
    name,
    prompt: def?.prompt ?? '',
    ...fields,
  };
  if (info?.engine !== undefined) run.engine = info.engine;
  if (info?.model !== undefined) run.model = info.model;
  return run;
}

function applyOne(
  db: RegistryDb,
  e: RunEvent,
  pos: { seq: number; index: number },
  ctx: RegistryFoldContext,
  batch: Batch,
): void {
  const runId = ctx.state.id;
  switch (e.type) {
    case 'stepStarted': {
      const jobId = stepJobId(runId, e.stepId, e.attempt);
      const row = db.jobRow(jobId);
      if (row) {
        db.setStatus(row.id, 'running');
        const info = ctx.agentInfo?.(row.name);
        db.setEngine(row.id, info?.engine, info?.model);
        return;
      }
      const fields = { jobId, kind: 'step' as const, attempt: e.attempt, start: e.at };
      const id = batch.sessionIds.get(pos.index);
      const run = { ...fields, status: 'running' as const, ...(id === undefined ? {} : { id }) };
      db.insert(newRun(ctx, e.stepId, run));
      return;
    }
    case 'sessionInitialized': {
      const row = db.latestStepRow(runId, e.stepId);
      if (!row) return;
      db.setSession(row.id, e.sessionId);
      db.rekey(row.id, e.monitoringId);
      return;
    }
    case 'stepCompleted':
    case 'stepFailed': {
      const id = stepRowId(db, ctx, e.stepId, e.attempt, e.at);
      // An `error` directive terminates the workflow: the agent run failed, its reason is the error.
      const error =
        e.type === 'stepFailed'
          ? e.error
          : e.directive.action === 'error'
            ? (e.directive.reason ?? 'the agent reported an error')
            : undefined;
      db.finish(id, error === undefined ? 'completed' : 'failed', e.at, error);
      db.setTelemetry(id, e.telemetry);
      return;
    }
    case 'stepInterrupted': {
      const row = db.jobRow(stepJobId(runId, e.stepId, e.attempt));
      if (row) db.finish(row.id, 'failed', e.at, 'interrupted: the process died during the step');
      return;
    }
    case 'stepCancelled': {
      const row = db.jobRow(stepJobId(runId, e.stepId, e.attempt));
      if (row?.status !== 'running' || batch.skipping.has(e.stepId)) return;
      // The seed's statuses have no `paused`: a paused attempt ended (resume starts a new one).
      if (batch.pausing) db.pause(row.id, e.at, e.reason);
      else db.finish(row.id, 'failed', e.at, `cancelled: ${e.reason}`);
      return;
    }
    case 'stepSkipped': {
      const row = db.latestStepRow(runId, e.stepId);
      if (row?.status === 'running') {
        db.finish(row.id, 'skipped', e.at);
        return;
      }
      const jobId = `${runId}:${e.stepId}:skip@${pos.seq}`;
      const id = db.insert(
        newRun(ctx, e.stepId, {
          jobId,
          kind: 'skip',
          attempt: pos.seq,
          status: 'skipped',
          start: e.at,
        }),
      );
      db.finish(id, 'skipped', e.at);
      return;
    }
    case 'triggerQueued': {
      const parent = db.latestStepRow(runId, e.stepId);
      const jobId = triggerJobId(runId, e.stepId, e.attempt);
      const fields = {
        jobId,
        kind: 'trigger' as const,
        attempt: e.attempt,
        status: 'running' as const,
        start: e.at,
        name: e.agent,
        prompt: e.prompt,
      };
      db.insert(newRun(ctx, e.stepId, parent ? { ...fields, parentId: parent.id } : fields));
      return;
    }
    case 'triggerFinished': {
      const row = db.jobRow(triggerJobId(runId, e.stepId, e.attempt));
      if (!row) return;
      db.finish(row.id, e.error === undefined ? 'completed' : 'failed', e.at, e.error);
      db.setTelemetry(row.id, e.telemetry);
      return;
    }
    default:
      return;
  }
}

/** The row of a step attempt, created when the start was never recorded. */
function stepRowId(
  db: RegistryDb,
  ctx: RegistryFoldContext,
  stepId: string,
  attempt: number,
  at: string,
): number {
  const jobId = stepJobId(ctx.state.id, stepId, attempt);
  return (
    db.jobRow(jobId)?.id ??
    db.insert(newRun(ctx, stepId, { jobId, kind: 'step', attempt, status: 'running', start: at }))
  );
}
