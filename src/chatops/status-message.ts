/**
 * Renders a run's status message: a header, what the run is doing, the step list with done /
 * running / failed marks and elapsed times, and tokens and cost so far. Pure; `now` is given.
 */
import type { MessageField, OutgoingMessage, RichSegment } from '../bridges/messages.ts';
import { bold, plain, rich } from '../bridges/render-text.ts';
import { layoutModule } from '../engine/layouts/index.ts';
import {
  addTelemetry,
  type RunState,
  type StepState,
  type Telemetry,
  ZERO_TELEMETRY,
} from '../engine/model.ts';
import { phaseStrip } from './phase-strip.ts';
import { actorName, durationWords, telemetryWords } from './words.ts';

/** Mark shown before a step, by status. */
export const STEP_MARKS: Readonly<Record<StepState['status'], string>> = {
  completed: '✅',
  running: '⏳',
  queued: '🕓',
  failed: '❌',
  skipped: '⏭',
  pending: '▫️',
};

/**
 * The run's status message; `progress` is the running step's latest progress line; `fullSteps`
 * the steps whose named agent runs with `full` (see step-permissions.ts; the workflow's own
 * `permissions: full` is marked without it).
 */
export function renderStatus(
  state: RunState,
  now: number,
  progress?: string,
  fullSteps?: ReadonlySet<string>,
): OutgoingMessage {
  const title = state.workflow.name ?? state.workflow.id;
  const lines: RichSegment[] = [bold(`Run ${state.id}`), plain(` · ${title}\n`)];
  lines.push(plain(`${statusLine(state)}\n`));
  const strip = phaseStrip(state, now);
  if (strip !== null) lines.push(plain(`${strip}\n`));
  for (const step of state.steps) {
    lines.push(plain(`\n${stepLine(state, step, now, progress, fullSteps)}`));
  }
  const fields: MessageField[] = [{ label: 'Started by', value: actorName(state.startedBy) }];
  const spent = telemetryWords(totalTelemetry(state));
  if (spent !== undefined) fields.push({ label: 'Spent', value: spent });
  return { text: rich(...lines), fields };
}

/** What the run is doing, in one line. */
export function statusLine(state: RunState): string {
  const step = state.steps[state.cursor];
  const active = state.steps.filter((s) => !s.excluded);
  const position = step ? `step ${active.indexOf(step) + 1} of ${active.length} (${step.id})` : '';
  switch (state.status) {
    case 'active':
      return `Running ${position}`.trim();
    case 'awaiting':
      return `Waiting for an answer at checkpoint ${state.checkpoint?.id ?? ''}`.trim();
    case 'blocked':
      return `Blocked, needs a human: ${state.blocked?.reason ?? 'unknown reason'}`;
    case 'completed':
      // "all steps completed" says nothing more than "Completed"; an early stop's reason does.
      return state.outcome && state.outcome.reason !== 'all steps completed'
        ? `Completed: ${state.outcome.reason}`
        : 'Completed';
    case 'failed':
      return `Failed: ${state.outcome?.reason ?? 'unknown reason'}`;
    case 'cancelled': {
      // The engine's reason already says "cancelled by X[: why]".
      const reason = state.outcome?.reason;
      if (reason && /^cancelled\b/i.test(reason))
        return reason.charAt(0).toUpperCase() + reason.slice(1);
      return `Cancelled${reason ? `: ${reason}` : ''}`;
    }
  }
}

/** One step: mark, id, elapsed time, and what it is doing. */
export function stepLine(
  state: RunState,
  step: StepState,
  now: number,
  progress?: string,
  fullSteps?: ReadonlySet<string>,
): string {
  if (step.excluded) return `${STEP_MARKS.skipped} ${step.id} (not in this run)`;
  const parts = [`${STEP_MARKS[step.status]} ${step.id}`];
  // A mark alone is lost on previews, screen readers and grep: each carries a word (issue 29).
  const word = stepWord(state, step);
  if (word !== undefined) parts.push(word);
  const started = step.startedAt === undefined ? Number.NaN : Date.parse(step.startedAt);
  const finished = step.finishedAt === undefined ? Number.NaN : Date.parse(step.finishedAt);
  if (step.status === 'running' && !Number.isNaN(started)) {
    parts.push(`running ${durationWords(now - started)}`);
    if (progress) parts.push(progress);
  } else if (step.status === 'queued') {
    parts.push('queued');
  } else if (!Number.isNaN(started) && !Number.isNaN(finished) && step.status !== 'pending') {
    parts.push(durationWords(finished - started));
  }
  if (step.status === 'failed' && step.error) parts.push(step.error);
  // Full access is what a reader must not miss; other postures stay out of the line.
  if (
    state.workflow.steps[step.index]?.permissions?.posture === 'full' ||
    fullSteps?.has(step.id) === true
  )
    parts.push('⚠ full access');
  if (state.checkpoint?.stepId === step.id) parts.push('✋ waiting for approval');
  return parts.join(' · ');
}

/**
 * The word beside a step's mark where the line has none of its own: "approved" when its last
 * checkpoint was approved, "done", "failed", "skipped", "not started". Running and queued steps
 * say so already.
 */
export function stepWord(state: RunState, step: StepState): string | undefined {
  switch (step.status) {
    case 'completed': {
      const last = state.checkpoints.filter((c) => c.stepId === step.id).at(-1);
      return last?.decision?.answer === 'approve' && state.checkpoint?.stepId !== step.id
        ? 'approved'
        : 'done';
    }
    case 'failed':
      return 'failed';
    case 'skipped':
      return 'skipped';
    case 'pending':
      return 'not started';
    default:
      return undefined;
  }
}

/** Tokens and cost of every step so far. */
export function totalTelemetry(state: RunState): Telemetry {
  return state.steps.reduce((sum, s) => addTelemetry(sum, s.telemetry), { ...ZERO_TELEMETRY });
}

/** The short line of a new "run ended / blocked" message. */
export function outcomeMessage(state: RunState): OutgoingMessage {
  const icon: Record<string, string> = {
    completed: '🏁',
    failed: '❌',
    cancelled: '🛑',
    blocked: '⚠️',
  };
  const more = layoutModule(state.layout)?.words?.outcomeLines?.(state) ?? [];
  return {
    text: rich(
      plain(`${icon[state.status] ?? 'ℹ️'} `),
      bold(`Run ${state.id}`),
      ' ',
      statusLine(state),
      ...(more.length > 0 ? [plain(`\n${more.join('\n')}`)] : []),
    ),
  };
}
