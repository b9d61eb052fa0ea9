/**
 * Where a run stands after the CLI drove it, the next command to type, and the exit code
 * (0: awaiting or completed; 1: failed, blocked or cancelled unless cancelling was the point).
 */

import type { CheckpointState, RunState } from '../../engine/model.ts';
import { personName } from '../../engine/person-name.ts';
import { formatCost, formatTokens } from './format.ts';
import { checkpointWhen } from './step-list.ts';

/** The lines to print and the exit code of the command. */
export interface Standing {
  lines: string[];
  exitCode: 0 | 1;
}

/** Options of describeStanding. */
export interface StandingOptions {
  /** The command asked for a cancel, so a cancelled run is success. */
  cancelWanted?: boolean;
}

/** Describes where `state` stands and what to type next. */
export function describeStanding(state: RunState, opts: StandingOptions = {}): Standing {
  const id = state.id;
  const step = state.steps[state.cursor];
  switch (state.status) {
    case 'awaiting': {
      const cp = state.checkpoint;
      if (!cp) return { lines: [`run ${id} is awaiting`], exitCode: 0 };
      const votes = cp.votes.filter((v) => v.answer === 'approve').length;
      const count =
        cp.policy.approvals > 1 ? ` (${votes} of ${cp.policy.approvals} approvals)` : '';
      const lines = [`awaiting approval ${approvalObject(cp)}${count}: ${cp.reason}`];
      lines.push(`  phasebridge approve ${id} [--reason TEXT]`);
      lines.push(`  phasebridge reject ${id} --reason TEXT`);
      if (cp.answers.includes('loop')) lines.push(`  phasebridge changes ${id} --reason TEXT`);
      if (cp.policy.fourEyes)
        lines.push(`  (four-eyes: ${personName(state.startedBy)} cannot approve)`);
      return { lines, exitCode: 0 };
    }
    case 'completed':
      return {
        lines: [`run ${id} completed: ${reasonOf(state)} (${costLine(state)})`],
        exitCode: 0,
      };
    case 'failed':
      return { lines: [`run ${id} failed: ${reasonOf(state)}`], exitCode: 1 };
    case 'cancelled':
      return {
        lines: [`run ${id} cancelled: ${reasonOf(state)}`],
        exitCode: opts.cancelWanted ? 0 : 1,
      };
    case 'blocked': {
      const kind = state.blocked?.kind ?? 'failure';
      const lines = [
        `run ${id} is blocked at ${step?.id ?? '?'}: ${state.blocked?.reason ?? kind}`,
      ];
      if (kind === 'corrupt') {
        lines.push('  (no command applies until it is repaired; see what a repair keeps first:)');
        lines.push(`  phasebridge repair ${id} --dry-run`);
      }
      for (const next of blockedNext(kind)) lines.push(`  phasebridge ${next} ${id}`);
      return { lines, exitCode: 1 };
    }
    case 'active':
      return {
        lines: [
          `run ${id} is running step ${step?.id ?? '?'}; it goes on in \`phasebridge serve\` or \`phasebridge worker\``,
          `  phasebridge status ${id}`,
          `  phasebridge logs ${id} --follow`,
        ],
        exitCode: 0,
      };
  }
}

function approvalObject(cp: CheckpointState): string {
  if (cp.when === 'before') return `to start ${cp.stepId}`;
  if (cp.when === 'after') return `of ${cp.stepId}`;
  return `(${checkpointWhen(cp)})`;
}

function blockedNext(kind: string): string[] {
  if (kind === 'paused') return ['resume', 'cancel'];
  if (kind === 'interrupted') return ['resume', 'retry', 'skip', 'cancel'];
  if (kind === 'corrupt') return ['repair'];
  return ['retry', 'skip', 'cancel'];
}

function reasonOf(state: RunState): string {
  return state.outcome?.reason ?? state.status;
}

function costLine(state: RunState): string {
  let tokens = 0;
  let cost = 0;
  for (const s of state.steps) {
    tokens += s.telemetry.tokensIn + s.telemetry.tokensOut;
    cost += s.telemetry.costUsd;
  }
  return `${formatTokens(tokens)} tokens, ${formatCost(cost)}`;
}
