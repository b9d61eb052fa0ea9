/**
 * One run, as text (pure): its header, the step table of `status RUN` (status, times, tokens,
 * cost), the open checkpoint with its policy, and the compact step list of the live view.
 */

import type { CheckpointState, RunState, StepState } from '../../engine/model.ts';
import { personName } from '../../engine/person-name.ts';
import {
  alignColumns,
  elapsedBetween,
  formatCost,
  formatElapsed,
  formatInstant,
  formatTokens,
  truncate,
} from './format.ts';

/** Header lines of a run: id, workflow, status, layout, workspace, starter, times. */
export function renderRunHeader(state: RunState): string[] {
  const track = state.selectedTrack === undefined ? '' : `  track ${state.selectedTrack}`;
  const conditions =
    state.selectedConditions.length === 0
      ? ''
      : `  conditions ${state.selectedConditions.join(',')}`;
  return [
    `run ${state.id}`,
    `  workflow  ${state.workflow.id}@${state.workflow.version}${track}${conditions}`,
    `  status    ${statusText(state)}`,
    `  layout    ${state.layout}`,
    `  workspace ${state.workspace}`,
    `  started   ${formatInstant(state.createdAt)} by ${personName(state.startedBy)}`,
    `  updated   ${formatInstant(state.updatedAt)}`,
  ];
}

/** The step table: STEP, AGENT, STATUS, TRY, STARTED, TIME, TOKENS IN/OUT, COST, and a total. */
export function renderStepTable(state: RunState, now: Date): string[] {
  const header = ['', 'STEP', 'AGENT', 'STATUS', 'TRY', 'STARTED', 'TIME', 'TOKENS IN/OUT', 'COST'];
  const rows = state.steps.map((s) => {
    const ran = s.attempt > 0;
    const elapsed = elapsedBetween(s.startedAt, s.finishedAt, now);
    return [
      s.index === state.cursor ? '>' : '',
      s.id,
      s.agent,
      stepStatusText(s),
      ran ? String(s.attempt) : '-',
      s.startedAt === undefined ? '-' : formatInstant(s.startedAt),
      elapsed === undefined ? '-' : formatElapsed(elapsed),
      ran ? `${formatTokens(s.telemetry.tokensIn)}/${formatTokens(s.telemetry.tokensOut)}` : '-',
      ran ? formatCost(s.telemetry.costUsd) : '-',
    ];
  });
  const total = totalTelemetry(state);
  const lines = alignColumns([header, ...rows]);
  lines.push(
    `total: ${formatTokens(total.tokensIn)} tokens in, ${formatTokens(total.tokensOut)} out, ${formatCost(total.costUsd)}`,
  );
  for (const s of state.steps) {
    if (s.status === 'failed' && s.error) lines.push(`step ${s.id} failed: ${s.error}`);
  }
  return lines;
}

/** The open checkpoint: what it asks, the answers, its policy and the votes so far. */
export function renderCheckpoint(cp: CheckpointState, state: RunState): string[] {
  const p = cp.policy;
  const policy = [`${p.approvals} approval${p.approvals === 1 ? '' : 's'} needed`];
  if (p.fourEyes) policy.push(`four-eyes (${personName(state.startedBy)} cannot approve)`);
  if (cp.expiresAt !== undefined) {
    policy.push(`expires ${formatInstant(cp.expiresAt)}, then ${p.onExpiry}`);
  } else {
    policy.push('never expires');
  }
  const lines = [
    `checkpoint ${cp.id} (${checkpointWhen(cp)})`,
    `  reason    ${cp.reason}`,
    `  answers   ${cp.answers.map((a) => (a === 'loop' ? 'changes' : a)).join(', ')}`,
    `  policy    ${policy.join('; ')}`,
    `  opened    ${formatInstant(cp.openedAt)}`,
  ];
  if (cp.expiredAt !== undefined)
    lines.push(`  expired   ${formatInstant(cp.expiredAt)} (kept open)`);
  for (const v of cp.votes) {
    const why = v.reason ? `: ${v.reason}` : '';
    lines.push(`  vote      ${v.answer} by ${personName(v.actor)} at ${formatInstant(v.at)}${why}`);
  }
  return lines;
}

/** What a checkpoint waits on, e.g. "after plan" or "before build". */
export function checkpointWhen(cp: CheckpointState): string {
  switch (cp.when) {
    case 'before':
      return `before ${cp.stepId}`;
    case 'after':
      return `after ${cp.stepId}`;
    case 'directive':
      return `asked for by ${cp.stepId}`;
    case 'loop-limit':
      return `${cp.stepId} reached its loop limit`;
    case 'pause':
      return `pause at ${cp.stepId}`;
  }
}

const SPINNER = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/** One frame of the live view: a marker per step (spinner while running) and its progress text. */
export function renderLiveSteps(
  state: RunState,
  progress: ReadonlyMap<string, string>,
  frame: number,
  now: Date,
  width: number,
): string[] {
  const rows = state.steps.map((s) => {
    const elapsed = elapsedBetween(s.startedAt, s.finishedAt, now);
    const time = s.attempt > 0 && elapsed !== undefined ? formatElapsed(elapsed) : '';
    const note = s.status === 'running' ? (progress.get(s.id) ?? '') : liveNote(s);
    return [`${marker(s, frame)} ${s.id}`, stepStatusText(s), time, note];
  });
  const lines = [`run ${state.id}  ${statusText(state)}`, ...alignColumns(rows)];
  return lines.map((l) => truncate(l, width));
}

/** The run status with its reason when blocked or ended. */
export function statusText(state: RunState): string {
  if (state.status === 'blocked' && state.blocked) {
    return `blocked (${state.blocked.kind}): ${state.blocked.reason}`;
  }
  if (state.outcome && (state.status === 'failed' || state.status === 'cancelled')) {
    return `${state.status}: ${state.outcome.reason}`;
  }
  return state.status;
}

/** A step's status as shown: `excluded` for steps outside the selected track or conditions. */
export function stepStatusText(s: StepState): string {
  return s.excluded ? 'excluded' : s.status;
}

function marker(s: StepState, frame: number): string {
  if (s.excluded) return ' ';
  switch (s.status) {
    case 'running':
      return SPINNER[frame % SPINNER.length]!;
    case 'queued':
      return '…';
    case 'completed':
      return '✔';
    case 'failed':
      return '✖';
    case 'skipped':
      return '↷';
    case 'pending':
      return '·';
  }
}

function liveNote(s: StepState): string {
  if (s.status === 'failed') return s.error ?? '';
  if (s.status === 'completed' && s.attempt > 0) {
    return `${formatTokens(s.telemetry.tokensIn + s.telemetry.tokensOut)} tokens, ${formatCost(s.telemetry.costUsd)}`;
  }
  return '';
}

function totalTelemetry(state: RunState): { tokensIn: number; tokensOut: number; costUsd: number } {
  let tokensIn = 0;
  let tokensOut = 0;
  let costUsd = 0;
  for (const s of state.steps) {
    tokensIn += s.telemetry.tokensIn;
    tokensOut += s.telemetry.tokensOut;
    costUsd += s.telemetry.costUsd;
  }
  return { tokensIn, tokensOut, costUsd };
}
