/** One line of plain progress text per run event (pure); null for events nobody needs to see. */

import type { RunEvent } from '../../engine/events.ts';
import type { Actor, RunState } from '../../engine/model.ts';
import { personName } from '../../engine/person-name.ts';
import { elapsedBetween, formatCost, formatElapsed, formatTokens } from './format.ts';

/**
 * The lines for one update's events; a vote that decided its checkpoint in the same update is
 * shown once, as the decision.
 */
export function eventLines(events: readonly RunEvent[], state: RunState): string[] {
  const decided = new Set(
    events.flatMap((e) => (e.type === 'checkpointResolved' ? [e.checkpointId] : [])),
  );
  const lines: string[] = [];
  for (const e of events) {
    if (e.type === 'checkpointVoted' && decided.has(e.checkpointId)) continue;
    const line = eventLine(e, state);
    if (line !== null) lines.push(line);
  }
  return lines;
}

/** The line for `event`, given the run's state after the update that carried it. */
export function eventLine(event: RunEvent, state: RunState): string | null {
  switch (event.type) {
    case 'runStarted':
      return `run ${event.runId} started: workflow ${event.workflow.id} (${event.workflow.steps.length} steps), layout ${event.layout}`;
    case 'stepQueued': {
      const delay = event.delayMs > 0 ? ` in ${formatElapsed(event.delayMs)}` : '';
      return `${event.stepId}: queued${delay} (attempt ${event.attempt})`;
    }
    case 'stepStarted':
      return `${event.stepId}: running (attempt ${event.attempt})`;
    case 'stepCompleted': {
      const step = state.steps.find((s) => s.id === event.stepId);
      const took = elapsedBetween(step?.startedAt, event.at, new Date(event.at));
      const time = took === undefined ? '' : ` in ${formatElapsed(took)}`;
      const t = event.telemetry;
      const usage = `${formatTokens(t.tokensIn + t.tokensOut)} tokens, ${formatCost(t.costUsd)}`;
      const d = event.directive;
      const directive =
        d.action === 'continue' ? '' : `; asks to ${d.action}${d.reason ? `: ${d.reason}` : ''}`;
      return `${event.stepId}: completed${time} (${usage})${directive}`;
    }
    case 'stepFailed': {
      const retry =
        event.retryInMs === undefined ? '' : `; retrying in ${formatElapsed(event.retryInMs)}`;
      return `${event.stepId}: failed (attempt ${event.attempt}): ${event.error}${retry}`;
    }
    case 'stepSkipped':
      return `${event.stepId}: skipped (${event.reason})`;
    case 'stepCancelled':
      return `${event.stepId}: cancelled (${event.reason})`;
    case 'stepInterrupted':
      return `${event.stepId}: interrupted (attempt ${event.attempt})`;
    case 'loopedBack': {
      const why = event.reason ? `: ${event.reason}` : '';
      return `${event.fromStepId}: looping back to ${event.toStepId} (loop ${event.counter})${why}`;
    }
    case 'reverted':
      return `reverted to ${event.toStepId} by ${who(event.by)}`;
    case 'runReset':
      return `run reset by ${who(event.by)}`;
    case 'checkpointOpened':
      return `checkpoint ${event.checkpoint.id} opened: ${event.checkpoint.reason}`;
    case 'checkpointVoted':
      return `checkpoint ${event.checkpointId}: ${event.vote.answer} by ${who(event.vote.actor)}`;
    case 'checkpointResolved': {
      const d = event.decision;
      const why = d.reason ? `: ${d.reason}` : '';
      const bound = d.digest ? ` (digest ${d.digest.slice(0, 6)})` : '';
      return `checkpoint ${event.checkpointId}: ${d.answer} by ${d.by.map(who).join(', ') || 'nobody'}${why}${bound}`;
    }
    case 'checkpointDigestRecorded':
      return event.previous === undefined
        ? `checkpoint ${event.checkpointId}: content ${event.label}`
        : `checkpoint ${event.checkpointId}: ${event.change ?? 'content changed'}; now ${event.label}, earlier votes cleared`;
    case 'checkpointExpired':
      return `checkpoint ${event.checkpointId} expired (kept open)`;
    case 'checkpointWithdrawn':
      return `checkpoint ${event.checkpointId} withdrawn: ${event.reason}`;
    case 'triggerQueued':
      return `${event.stepId}: triggering agent ${event.agent} (attempt ${event.attempt})`;
    case 'triggerFinished':
      return event.error === undefined
        ? `${event.stepId}: triggered agent finished`
        : `${event.stepId}: triggered agent failed: ${event.error}`;
    case 'runBlocked':
      return `run blocked (${event.kind}): ${event.reason}`;
    case 'runResumed':
      return `run resumed by ${who(event.by)}`;
    case 'runCompleted':
      return `run completed: ${event.reason}`;
    case 'runFailed':
      return `run failed: ${event.reason}`;
    case 'runCancelled':
      return `run cancelled: ${event.reason}`;
    case 'phaseMoved': {
      const m = event.move;
      const why = m.evidence ? `: ${m.evidence}` : '';
      return `phase ${m.from} → ${m.reason === 'done' ? 'D (done)' : m.to} (${m.reason}${m.override ? ', override' : ''})${why}`;
    }
    case 'phaseStopBlocked':
      return `phase held: ${event.reason}`;
    case 'feedbackRecorded': {
      const f = event.entry;
      return `${f.stepId}: ${FEEDBACK_WORDS[f.kind]} by ${who(f.by)} for attempt ${f.forAttempt}: ${f.text}`;
    }
    case 'feedbackForwarded':
      return `${event.entries.length} note(s) moved on to ${event.stepId}, attempt ${event.forAttempt}`;
    case 'tasksPlanned':
      return `${event.stepId}: ${event.tasks.length} task(s) planned`;
    case 'taskQueued':
      return `${event.stepId}/${event.taskId}: queued (attempt ${event.attempt})`;
    case 'taskStarted':
      return `${event.stepId}/${event.taskId}: running (attempt ${event.attempt})`;
    case 'taskCompleted': {
      const r = event.result;
      const parts = r ? [r.branch, r.pr && `PR #${r.pr}`, r.commit].filter(Boolean) : [];
      return `${event.stepId}/${event.taskId}: completed${parts.length > 0 ? ` (${parts.join(', ')})` : ''}`;
    }
    case 'taskFailed': {
      const retry =
        event.retryInMs === undefined ? '' : `; retrying in ${formatElapsed(event.retryInMs)}`;
      return `${event.stepId}/${event.taskId}: failed (attempt ${event.attempt}): ${event.error}${retry}`;
    }
    case 'taskCancelled':
      return `${event.stepId}/${event.taskId}: cancelled (${event.reason})`;
    case 'taskSkipped':
      return `${event.stepId}/${event.taskId}: skipped (${event.reason})`;
    case 'sessionInitialized':
    case 'chainCompleted':
      return null;
  }
}

const FEEDBACK_WORDS = {
  changes: 'changes requested',
  approval: 'approval note',
  guidance: 'guidance',
} as const;

function who(actor: Actor): string {
  return personName(actor);
}
