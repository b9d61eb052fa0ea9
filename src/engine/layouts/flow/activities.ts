/**
 * The flow layout's activities, as pure data: which run events are phase boundaries (a step
 * finishing, a checkpoint decided, a task finishing, a revert, the terminal transition) and the
 * FlowActivity each becomes (seed 003, activity.schema.json). An activity's id carries the seq of
 * the event that produced it, so a projection repeated after a crash finds it already written.
 */

import type { RunEvent } from '../../events.ts';
import type { RunState } from '../../model.ts';
import { personName } from '../../person-name.ts';

/** Maps an id to the flow id pattern `^[a-z0-9][a-z0-9_-]*$` (lowercase, other characters → '-'). */
export function flowId(text: string): string {
  const id = text
    .toLowerCase()
    .replace(/[^a-z0-9_-]+/g, '-')
    .replace(/^[-_]+/, '')
    .slice(0, 180);
  return id === '' ? 'x' : id;
}

/** The activity types of activity.schema.json. */
export type FlowActivityType =
  | 'bash'
  | 'skill'
  | 'agent'
  | 'task'
  | 'gate'
  | 'evaluation'
  | 'external';

/** The activity statuses of activity.schema.json. */
export type FlowActivityStatus =
  | 'pending'
  | 'running'
  | 'passed'
  | 'failed'
  | 'skipped'
  | 'blocked';

/** One activity to record (optional fields omitted when unknown, never null). */
export interface ActivityDraft {
  id: string;
  phase: string;
  type: FlowActivityType;
  name: string;
  status: FlowActivityStatus;
  startedAt?: string;
  completedAt: string;
  summary?: string;
  exitCode?: number;
}

function stepOf(state: RunState | null, stepId: string) {
  return state?.steps.find((s) => s.id === stepId);
}

/**
 * The activity `event` (with ledger seq `seq`) records, or null when it is not a boundary.
 * `before` is the state before the event (for when the step started).
 */
export function activityOf(
  event: RunEvent,
  seq: number,
  before: RunState | null,
): ActivityDraft | null {
  const tag = `e${seq}`;
  switch (event.type) {
    case 'stepCompleted': {
      const started = stepOf(before, event.stepId)?.startedAt;
      const d = event.directive;
      return {
        id: `${flowId(event.stepId)}-${tag}`,
        phase: flowId(event.stepId),
        type: 'agent',
        name: event.stepId,
        status: 'passed',
        ...(started !== undefined ? { startedAt: started } : {}),
        completedAt: event.at,
        summary: `step ${event.stepId} completed${d.action === 'continue' ? '' : ` (${d.action}${d.reason ? `: ${d.reason}` : ''})`}`,
        exitCode: event.exitCode,
      };
    }
    case 'stepFailed': {
      if (event.retryInMs !== undefined) return null; // a retry follows: not a boundary
      const started = stepOf(before, event.stepId)?.startedAt;
      return {
        id: `${flowId(event.stepId)}-${tag}`,
        phase: flowId(event.stepId),
        type: 'agent',
        name: event.stepId,
        status: 'failed',
        ...(started !== undefined ? { startedAt: started } : {}),
        completedAt: event.at,
        summary: `step ${event.stepId} failed: ${event.error}`,
      };
    }
    case 'stepSkipped':
      return {
        id: `${flowId(event.stepId)}-${tag}`,
        phase: flowId(event.stepId),
        type: 'agent',
        name: event.stepId,
        status: 'skipped',
        completedAt: event.at,
        summary: event.reason,
      };
    case 'checkpointResolved': {
      const cp = before?.checkpoint;
      const stepId = cp?.stepId ?? event.checkpointId.split(':')[0]!;
      const answer = event.decision.answer;
      const by = event.decision.by.map(personName).join(', ');
      return {
        id: `${flowId(stepId)}-gate-${tag}`,
        phase: flowId(stepId),
        type: 'gate',
        name: `checkpoint ${event.checkpointId}`,
        status: answer === 'reject' ? 'failed' : 'passed',
        ...(cp?.openedAt !== undefined ? { startedAt: cp.openedAt } : {}),
        completedAt: event.at,
        // flow's activity has no digest field: the summary names it (run.json has it in full).
        summary: `${answer}${by ? ` by ${by}` : ''}${event.decision.reason ? `: ${event.decision.reason}` : ''}${event.decision.digest ? ` (content sha256 ${event.decision.digest.slice(0, 12)})` : ''}`,
      };
    }
    case 'taskCompleted':
    case 'taskFailed': {
      if (event.type === 'taskFailed' && event.retryInMs !== undefined) return null;
      const task = stepOf(before, event.stepId)?.tasks?.find((t) => t.id === event.taskId);
      return {
        id: `${flowId(event.stepId)}-task-${flowId(event.taskId)}-${tag}`,
        phase: flowId(event.stepId),
        type: 'task',
        name: task?.title ?? event.taskId,
        status: event.type === 'taskCompleted' ? 'passed' : 'failed',
        ...(task?.startedAt !== undefined ? { startedAt: task.startedAt } : {}),
        completedAt: event.at,
        summary:
          event.type === 'taskCompleted'
            ? `task ${event.taskId} completed`
            : `task ${event.taskId} failed: ${event.error}`,
      };
    }
    case 'reverted':
    case 'runReset': {
      const to = event.type === 'reverted' ? event.toStepId : (before?.steps[0]?.id ?? 'start');
      return {
        id: `${flowId(to)}-rewind-${tag}`,
        phase: flowId(to),
        type: 'external',
        name: event.type === 'reverted' ? `revert to ${to}` : 'reset',
        status: 'skipped',
        completedAt: event.at,
        summary: `${event.type === 'reverted' ? `reverted to ${to}` : 'run reset'} by ${personName(event.by)}`,
      };
    }
    case 'runCompleted':
    case 'runFailed':
    case 'runCancelled': {
      const phase = flowId(before?.steps[before.cursor]?.id ?? 'run');
      const status =
        event.type === 'runCompleted'
          ? 'passed'
          : event.type === 'runFailed'
            ? 'failed'
            : 'skipped';
      return {
        id: `run-${event.type.slice(3).toLowerCase()}-${tag}`,
        phase,
        type: 'evaluation',
        name: 'terminal transition',
        status,
        completedAt: event.at,
        summary: event.reason,
      };
    }
    default:
      return null;
  }
}

/** True when `event` is recorded as an activity. */
export function isBoundary(event: RunEvent): boolean {
  return activityOf(event, 0, null) !== null;
}
