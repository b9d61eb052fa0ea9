/**
 * What the coordinator layout writes, as pure data: `.coordinator/state.json` with every key of
 * the agile coordinator's full schema (seed 004), nulls included, derived from a run's state,
 * and the seed's state machine: IDLE → DISCOVERING → PLANNING → EXECUTING ⇄ MERGING →
 * VERIFYING → SUMMARIZING → IDLE.
 */
import { createHash } from 'node:crypto';
import path from 'node:path';
import type { RunState, StepState } from '../../model.ts';
import type { TaskState } from '../../tasks/types.ts';

/** The layout's folder inside a workspace. */
export const COORDINATOR_DIR = '.coordinator';

/** The coordinator's states. */
export type CoordinatorPhase =
  | 'IDLE'
  | 'DISCOVERING'
  | 'PLANNING'
  | 'EXECUTING'
  | 'MERGING'
  | 'VERIFYING'
  | 'SUMMARIZING';

/**
 * The seed's transitions. MERGING → VERIFYING is the seed's "all merged" edge back into
 * EXECUTING followed at once by its "all complete" edge to VERIFYING (no task is left to run).
 */
export const COORDINATOR_TRANSITIONS: Readonly<
  Record<CoordinatorPhase, readonly CoordinatorPhase[]>
> = {
  IDLE: ['DISCOVERING'],
  DISCOVERING: ['PLANNING'],
  PLANNING: ['EXECUTING'],
  EXECUTING: ['MERGING', 'VERIFYING'],
  MERGING: ['EXECUTING', 'VERIFYING'],
  VERIFYING: ['SUMMARIZING'],
  SUMMARIZING: ['IDLE'],
};

/** Which state each preset step stands for (other step ids: EXECUTING). */
export const STEP_PHASES: Readonly<Record<string, CoordinatorPhase>> = {
  discover: 'DISCOVERING',
  plan: 'PLANNING',
  'plan-auto': 'PLANNING',
  execute: 'EXECUTING',
  merge: 'MERGING',
  verify: 'VERIFYING',
  summarize: 'SUMMARIZING',
};

/** The coordinator state a run is in: its current step's, IDLE once it completed. */
export function coordinatorPhase(state: RunState): CoordinatorPhase {
  if (state.status === 'completed') return 'IDLE';
  const step = state.steps[state.cursor];
  return STEP_PHASES[step?.id ?? ''] ?? 'EXECUTING';
}

/** Why going from `from` to `to` is not one of the seed's transitions, or null. */
export function coordinatorTransitionProblem(
  from: CoordinatorPhase,
  to: CoordinatorPhase,
): string | null {
  if (from === to || COORDINATOR_TRANSITIONS[from].includes(to)) return null;
  return `${from} → ${to} is not a coordinator transition (from ${from}: ${COORDINATOR_TRANSITIONS[from].join(', ')})`;
}

/** `coord-<date>-<6 hex>` for a run id (stable: the same run always has the same session). */
export function coordinatorSessionId(runId: string): string {
  const date = /^(\d{4}-\d{2}-\d{2})/.exec(runId)?.[1] ?? 'undated';
  return `coord-${date}-${createHash('sha256').update(runId).digest('hex').slice(0, 6)}`;
}

/** Absolute paths of the layout's files. */
export function coordinatorPaths(workspace: string) {
  const dir = path.join(path.resolve(workspace), COORDINATOR_DIR);
  return { dir, state: path.join(dir, 'state.json') };
}

/** state.json as the seed's full schema (every key present, null when not known). */
export interface CoordinatorStateFile {
  session_id: string;
  state: CoordinatorPhase;
  started_at: string;
  updated_at: string;
  config: {
    execution_mode: 'sequential' | 'parallel';
    max_workers: number;
    autonomy_level: 'autonomous' | 'supervised';
    reporting: 'summary-only';
  };
  tasks: { queued: string[]; in_progress: string[]; completed: string[]; failed: string[] };
  workers: {
    id: string;
    task_id: string;
    status: 'in_progress' | 'completed' | 'failed';
    pr_number: number | null;
    commit: string | null;
    merged: boolean;
    started_at: string | null;
    completed_at: string | null;
  }[];
  merge_queue: number[];
  verification: {
    status: 'passed' | 'failed' | null;
    tests_total: number | null;
    tests_passed: number | null;
    build_status: 'passed' | 'failed' | null;
    completed_at: string | null;
  };
  summary: string | null;
  /** Which phasebridge run this session is (so a bridge can tell its own sessions). */
  phasebridge_run_id?: string;
}

function tasksStep(state: RunState): StepState | undefined {
  return state.steps.find((s) => state.workflow.steps[s.index]?.tasks !== undefined);
}

function stepNamed(state: RunState, id: string): StepState | undefined {
  return state.steps.find((s) => s.id === id);
}

/**
 * `worker-<n>` numbers: one per phasebridge worker (the queue's worker id) in the order they
 * first took a task, so two worker processes show as worker-1 and worker-2 as in the seed. A
 * task whose worker is not known (an older ledger) counts as a worker of its own.
 */
function workerNumbers(started: readonly TaskState[]): Map<string, number> {
  const order = [...started].sort((a, b) => (a.startedAt ?? '').localeCompare(b.startedAt ?? ''));
  const lanes = new Map<string, number>();
  for (const t of order) {
    const key = t.worker ?? `task:${t.id}`;
    if (!lanes.has(key)) lanes.set(key, lanes.size + 1);
  }
  return lanes;
}

/** The state.json document of a run. */
export function coordinatorState(state: RunState): CoordinatorStateFile {
  const exec = tasksStep(state);
  const def = exec ? state.workflow.steps[exec.index]!.tasks! : undefined;
  const tasks = exec?.tasks ?? [];
  const merge = stepNamed(state, 'merge');
  const merged = merge?.status === 'completed';
  // A queued job has no worker yet: the seed lists spawned workers (queued tasks are in tasks.queued).
  const started = tasks.filter((t) => t.attempt > 0 && t.status !== 'queued');
  const lanes = workerNumbers(started);
  const workers = started.map((t) => ({
    id: `worker-${lanes.get(t.worker ?? `task:${t.id}`)}`,
    task_id: t.id,
    status:
      t.status === 'completed'
        ? ('completed' as const)
        : t.status === 'failed'
          ? ('failed' as const)
          : ('in_progress' as const),
    pr_number: t.result?.pr ?? null,
    commit: t.result?.commit ?? null,
    merged: merged && t.status === 'completed' && t.result?.pr !== undefined,
    started_at: t.startedAt ?? null,
    completed_at: t.status === 'completed' || t.status === 'failed' ? (t.finishedAt ?? null) : null,
  }));
  const verify = stepNamed(state, 'verify');
  const v = verify?.status === 'completed' ? verify.directive?.verification : undefined;
  const summarize = stepNamed(state, 'summarize');
  const maxWorkers = def?.maxWorkers ?? 1;
  return {
    session_id: coordinatorSessionId(state.id),
    state: coordinatorPhase(state),
    started_at: state.createdAt,
    updated_at: state.updatedAt,
    config: {
      execution_mode: maxWorkers > 1 ? 'parallel' : 'sequential',
      max_workers: maxWorkers,
      autonomy_level: state.selectedTrack === 'autonomous' ? 'autonomous' : 'supervised',
      reporting: 'summary-only',
    },
    tasks: {
      queued: tasks.filter((t) => t.status === 'pending' || t.status === 'queued').map((t) => t.id),
      in_progress: tasks.filter((t) => t.status === 'running').map((t) => t.id),
      completed: tasks.filter((t) => t.status === 'completed').map((t) => t.id),
      failed: tasks.filter((t) => t.status === 'failed' || t.status === 'skipped').map((t) => t.id),
    },
    workers,
    merge_queue: merged
      ? []
      : workers.flatMap((w) =>
          w.status === 'completed' && w.pr_number !== null ? [w.pr_number] : [],
        ),
    verification: {
      status:
        v === undefined
          ? null
          : v.buildStatus === 'passed' && v.testsPassed === v.testsTotal
            ? 'passed'
            : 'failed',
      tests_total: v?.testsTotal ?? null,
      tests_passed: v?.testsPassed ?? null,
      build_status: v?.buildStatus ?? null,
      completed_at: v === undefined ? null : (verify?.finishedAt ?? null),
    },
    summary:
      summarize?.status === 'completed'
        ? (summarize.directive?.reason ??
          `${tasks.filter((t) => t.status === 'completed').length} of ${tasks.length} task(s) completed`)
        : null,
    phasebridge_run_id: state.id,
  };
}
