/**
 * Engine effects → queue work. enqueueStep / enqueueTrigger become jobs (the trigger's queue
 * step id is `<stepId>+trigger`, see job-payload.ts), cancelStep cancels a job, scheduleExpiry
 * arms a timer. The mapping is pure (`jobOfEffect`, given what `prepare` resolved: the agent and
 * the workspace reference); `EffectRunner` does the I/O.
 */

import type { Effect, RunEvent } from '../../engine/events.ts';
import { feedbackFor, type RunState, taskQueueStepId } from '../../engine/model.ts';
import { personName } from '../../engine/person-name.ts';
import type { Log } from '../../log.ts';
import { markStage } from '../../trace.ts';
import { errorMessage } from '../queue/outcome.ts';
import { type JobQueue, type JobSpec, jobIdOf } from '../queue/port.ts';
import type { ExpiryTimers } from './expiry-timers.ts';
import {
  type JobAgent,
  PAYLOAD_VERSION,
  type StepJobPayload,
  triggerQueueStepId,
  type WorkspaceRef,
} from './job-payload.ts';
import { type PayloadInput, promptWithInputs } from './run-inputs.ts';
import { jobOfTaskEffect } from './task-jobs.ts';

/** A job to enqueue, with its delay. */
export interface PlannedJob {
  spec: JobSpec;
  delayMs: number;
}

/** Chained prompts of the step, and those this visit completed already (they are not re-run). */
function addChain(state: RunState, stepId: string, payload: StepJobPayload): void {
  const chain = state.workflow.steps.find((s) => s.id === stepId)?.chain;
  if (chain === undefined) return;
  payload.chain = [...chain];
  const done = state.steps.find((s) => s.id === stepId)?.completedChains ?? [];
  if (done.length > 0) payload.chainsDone = [...done];
}

/**
 * The feedback of the attempt, and the engine session to resume with it: only when some of it is
 * new since the step's last attempt and that attempt's session was the engine's own (a job id
 * stands in for engines that announce none; it cannot be resumed).
 */
function addFeedback(
  state: RunState,
  stepId: string,
  attempt: number,
  payload: StepJobPayload,
): void {
  const entries = feedbackFor(state, stepId, attempt);
  if (entries.length === 0) return;
  payload.feedback = entries.map((f) => ({
    kind: f.kind,
    by: personName(f.by),
    byId: f.by.id,
    at: f.at,
    text: f.text,
    fresh: f.forAttempt === attempt,
  }));
  const step = state.steps.find((s) => s.id === stepId);
  const session = step?.sessionId ?? step?.previousSessionId;
  const fresh = entries.some((f) => f.forAttempt === attempt);
  if (fresh && session !== undefined && !session.startsWith(`${state.id}:`)) {
    payload.resumeSession = session;
  }
}

/** What the bridge resolved for a job before it is queued (see job-prep.ts). */
export interface PreparedJob {
  agent: JobAgent;
  workspace: WorkspaceRef;
  /** Why the job cannot run (unknown agent, no git remote …): the worker fails it with this. */
  problem?: string;
  /** An admin allowed `permissions: full` in the run's workspace (set only when asked for). */
  fullAllowed?: boolean;
  /** The requester's files (git mode: with their bytes), for step and task jobs. */
  inputs?: PayloadInput[];
  /** Git mode, codemachine: the registry.db row the bridge registered for the job. */
  monitoringId?: number;
}

/** An enqueue effect. */
export type EnqueueEffect = Extract<
  Effect,
  { type: 'enqueueStep' | 'enqueueTrigger' | 'enqueueTask' }
>;

/** The job an enqueue effect asks for, with what the bridge resolved for it. */
export function jobOfEffect(
  state: RunState,
  effect: EnqueueEffect,
  prepared: PreparedJob,
): PlannedJob {
  if (effect.type === 'enqueueTask') return jobOfTaskEffect(state, effect, prepared);
  const trigger = effect.type === 'enqueueTrigger';
  const payload: StepJobPayload = {
    v: PAYLOAD_VERSION,
    kind: trigger ? 'trigger' : 'step',
    stepId: effect.stepId,
    workspace: prepared.workspace,
    layout: state.layout,
    agent: prepared.agent,
    prompt: effect.prompt,
  };
  if (prepared.problem !== undefined) payload.problem = prepared.problem;
  if (prepared.fullAllowed === true) payload.fullAllowed = true;
  if (prepared.monitoringId !== undefined) payload.monitoringId = prepared.monitoringId;
  // A worker without the workspace writes the spec where the layout expects it.
  if (prepared.workspace.mode === 'git') payload.spec = state.spec;
  // A trigger's sub-agent runs where its step may run.
  const runsOn = state.workflow.steps.find((s) => s.id === effect.stepId)?.runsOn;
  if (runsOn !== undefined) payload.runsOn = [...runsOn];
  if (effect.type === 'enqueueStep' && effect.timeoutMs !== undefined) {
    payload.timeoutMs = effect.timeoutMs;
  }
  // The worker cannot see the run; it needs this to refuse a re-take after a lost lease.
  if (!trigger && !state.resumeFromLastStep) payload.noResume = true;
  if (!trigger) addChain(state, effect.stepId, payload);
  // The step's declared posture travels with the job; the worker merges it with the agent's.
  const permissions = state.workflow.steps.find((s) => s.id === effect.stepId)?.permissions;
  if (!trigger && permissions !== undefined) payload.permissions = structuredClone(permissions);
  if (!trigger) addFeedback(state, effect.stepId, effect.attempt, payload);
  if (!trigger && prepared.inputs !== undefined) {
    payload.inputs = prepared.inputs;
    payload.prompt = promptWithInputs(payload.prompt, state.inputs);
    if (payload.chain !== undefined && payload.chain.length > 0) {
      payload.chain[0] = promptWithInputs(payload.chain[0]!, state.inputs);
    }
  }
  return {
    spec: {
      runId: effect.runId,
      stepId: trigger ? triggerQueueStepId(effect.stepId) : effect.stepId,
      attempt: effect.attempt,
      payload: { ...payload },
    },
    delayMs: effect.type === 'enqueueStep' ? effect.delayMs : 0,
  };
}

/**
 * The job id of a trigger that this commit left behind without a result (the run was cancelled,
 * reverted, …): the engine emits no cancel for triggers, so the caller cancels it.
 */
export function abandonedTriggerJob(
  previous: RunState | undefined,
  next: RunState,
  events: readonly RunEvent[],
): string | null {
  const t = previous?.trigger;
  if (t === undefined || t.status !== 'queued') return null;
  if (events.some((e) => e.type === 'triggerFinished')) return null;
  const still = next.trigger;
  if (still && still.stepId === t.stepId && still.attempt === t.attempt) return null;
  return jobIdOf({ runId: next.id, stepId: triggerQueueStepId(t.stepId), attempt: t.attempt });
}

const ENQUEUE_RETRY_MS = [50, 250, 1000];

/** Carries out effects against a queue and the expiry timers. */
export class EffectRunner {
  constructor(
    private readonly deps: {
      queue: JobQueue;
      /** Resolves the agent and workspace reference of a job (I/O: bridge.db, git). */
      prepare(state: RunState, effect: EnqueueEffect): Promise<PreparedJob>;
      timers: ExpiryTimers;
      log: Log;
      /** Called when a checkpoint's expiry time has come. */
      onExpiry(runId: string, checkpointId: string): void;
      /** Reads a tasks step's task list and commits what it holds (after the effect's delay). */
      onLoadTasks(state: RunState, effect: Extract<Effect, { type: 'loadTasks' }>): Promise<void>;
    },
  ) {}

  /** Carries out every effect in order; a failed enqueue is retried, then logged. */
  async run(state: RunState, effects: readonly Effect[]): Promise<void> {
    for (const effect of effects) {
      switch (effect.type) {
        case 'enqueueStep':
        case 'enqueueTrigger':
        case 'enqueueTask': {
          const prepared = await this.deps.prepare(state, effect);
          markStage(effect.runId, 'prepared');
          await this.#enqueue(jobOfEffect(state, effect, prepared));
          markStage(effect.runId, 'enqueued');
          break;
        }
        case 'cancelStep':
          await this.cancel(jobIdOf(effect));
          break;
        case 'cancelTask':
          await this.cancel(
            jobIdOf({ ...effect, stepId: taskQueueStepId(effect.stepId, effect.taskId) }),
          );
          break;
        case 'loadTasks': {
          // Not awaited: the load commits to this run, whose commit may be what runs us now.
          const load = () => {
            this.deps.onLoadTasks(state, effect).catch((err: unknown) => {
              this.deps.log.error(
                { runId: effect.runId, err: errorMessage(err) },
                'reading a task list failed',
              );
            });
          };
          if (effect.delayMs > 0) setTimeout(load, effect.delayMs).unref();
          else queueMicrotask(load);
          break;
        }
        case 'scheduleExpiry':
          this.deps.timers.arm(effect.runId, effect.checkpointId, effect.at, () =>
            this.deps.onExpiry(effect.runId, effect.checkpointId),
          );
          break;
      }
    }
  }

  /** Cancels a job; a failure is logged (the job's late result is stale and refused anyway). */
  async cancel(jobId: string): Promise<void> {
    try {
      const answer = await this.deps.queue.cancel(jobId);
      this.deps.log.debug({ jobId, answer }, 'job cancelled');
    } catch (err) {
      this.deps.log.warn({ jobId, err: errorMessage(err) }, 'cancelling a job failed');
    }
  }

  async #enqueue(job: PlannedJob): Promise<void> {
    for (let i = 0; ; i++) {
      try {
        await this.deps.queue.enqueue(job.spec, { delayMs: job.delayMs });
        return;
      } catch (err) {
        const wait = ENQUEUE_RETRY_MS[i];
        const fields = { jobId: jobIdOf(job.spec), err: errorMessage(err) };
        if (wait === undefined) {
          // The step stays queued without a job: start-up reconciliation re-enqueues it.
          this.deps.log.error(fields, 'enqueueing a job failed; restart to recover the run');
          return;
        }
        this.deps.log.warn(fields, 'enqueueing a job failed; retrying');
        await new Promise((r) => setTimeout(r, wait));
      }
    }
  }
}
