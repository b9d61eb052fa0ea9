/**
 * The PABCD rules inside decide() for codexclaw-layout runs: the workflow must be a phase cycle,
 * a closed gate holds the run (a bounded Stop continuation, then a checkpoint), and every change
 * of the current step's phase is checked against the legal moves and recorded as `phaseMoved`.
 * Pure, like the rest of decide.
 */
import type { Command } from '../commands.ts';
import { type DecideContext, refuse } from '../decide-context.ts';
import { defOf, openCheckpoint } from '../decide-flow.ts';
import { isTerminal, type RunState, type StepState } from '../model.ts';
import { gateProblem, scanEvidenceOf } from './attest.ts';
import {
  type GateName,
  gateOf,
  isLegalMove,
  MAX_STOP_BLOCKS,
  type Phase,
  type PhaseMove,
  phaseOfStep,
  storedPhase,
} from './phases.ts';

/** How a gate is named to users. */
export const GATE_LABELS: Readonly<Record<GateName, string>> = Object.freeze({
  interview: 'interview',
  auditPassed: 'audit',
  checkPassed: 'check',
});

/** The step the run enters after `step`, passing over excluded ones. */
function nextStep(state: RunState, step: StepState): StepState | undefined {
  return state.steps.slice(step.index + 1).find((s) => !s.excluded);
}

/** Why the gate after `step` is closed (null when there is no gate or it passes). */
function closedGate(state: RunState, done: StepState): { gate: GateName; why: string } | null {
  // The caller may hold the step as it was before its completion was folded in.
  const step = state.steps[done.index]!;
  const from = phaseOfStep(step.id);
  const next = nextStep(state, step);
  const to = next ? phaseOfStep(next.id) : null;
  if (from === null || to === null) return null;
  const gate = gateOf(from, to);
  if (gate === null) return null;
  const problem = gateProblem(gate, step.directive?.attest);
  if (problem === null) return null;
  return { gate, why: `${GATE_LABELS[gate]} gate ${from}→${to} is closed: ${problem}` };
}

/**
 * Called before a completed step moves on. A closed gate sends the agent back to work with the
 * reason (codexclaw's Stop block) at most MAX_STOP_BLOCKS times in a row, then asks a human.
 * Returns true when it held the run.
 */
export function holdAtGate(ctx: DecideContext, step: StepState): boolean {
  const pabcd = ctx.state.pabcd;
  if (!pabcd) return false;
  const closed = closedGate(ctx.state, step);
  if (closed === null) return false;
  const blocks = pabcd.stopBlockPhase === pabcd.phase ? pabcd.stopBlockCount : 0;
  if (blocks < MAX_STOP_BLOCKS) {
    ctx.emit({ type: 'phaseStopBlocked', reason: closed.why });
    const def = defOf(ctx, step.index);
    const attempt = step.attempt + 1;
    ctx.emit({ type: 'stepQueued', stepId: step.id, attempt, delayMs: 0, mode: 'resume' });
    ctx.effect({
      type: 'enqueueStep',
      runId: ctx.state.id,
      stepId: step.id,
      attempt,
      agent: def.agent,
      prompt: `${def.prompt}\n\nThe phase cannot end yet: ${closed.why}. Finish the work and write the attestation ("attest") in your directive file.`,
      delayMs: 0,
      ...(def.timeoutMs !== undefined ? { timeoutMs: def.timeoutMs } : {}),
    });
    return true;
  }
  const ask = `${closed.why}. Approve overrides the gate (give a reason: it is recorded as the evidence)`;
  openCheckpoint(ctx, step, 'after', ask, closed.gate);
  return true;
}

const HUMAN_COMMANDS = new Set<Command['type']>([
  'start',
  'answerCheckpoint',
  'requestChanges',
  'giveGuidance',
  'skip',
  'pause',
  'resume',
  'retry',
  'cancel',
  'revert',
  'reset',
]);

/** A human move from chat or the CLI, as opposed to an agent's report or a timer. */
function isHuman(c: Command): boolean {
  return HUMAN_COMMANDS.has(c.type) && c.actor.id !== 'system';
}

/** Who moved the phase, for a row. */
function mover(c: Command): Pick<PhaseMove, 'actor' | 'reason' | 'by'> {
  return isHuman(c)
    ? { actor: 'human', reason: 'chat', by: c.actor }
    : { actor: 'agent', reason: 'orchestrate' };
}

/** The gate checkpoint this command approved, if any (its reason is the override evidence). */
function approvedGate(ctx: DecideContext): { gate: GateName; reason: string } | null {
  for (const e of ctx.events) {
    if (e.type !== 'checkpointResolved' || e.decision.answer !== 'approve') continue;
    const cp = ctx.state.checkpoints.find((c) => c.id === e.checkpointId);
    if (cp?.gate) return { gate: cp.gate, reason: e.decision.reason ?? '' };
  }
  return null;
}

function emitMove(ctx: DecideContext, move: Omit<PhaseMove, 'at'>): void {
  ctx.emit({ type: 'phaseMoved', move });
}

/**
 * After a command's rules ran: records the phase change its events made, refusing the command
 * when the move is illegal or crosses a closed gate nobody overrode.
 */
export function trackPhase(ctx: DecideContext, c: Command): void {
  const pabcd = ctx.state.pabcd;
  if (!pabcd) return;
  const who = mover(c);
  if (ctx.events.some((e) => e.type === 'runReset') && storedPhase(pabcd.phase) !== 'IDLE') {
    emitMove(ctx, { ...who, from: pabcd.phase, to: 'IDLE', reason: 'reset' });
  }
  const state = ctx.state;
  if (isTerminal(state.status)) {
    const from = storedPhase(state.pabcd!.phase);
    if (from !== 'IDLE') {
      const evidence = state.outcome?.reason;
      emitMove(ctx, { ...who, from, to: 'IDLE', reason: 'reset', ...(evidence && { evidence }) });
    }
    return;
  }
  const current = state.steps[state.cursor];
  const to = current ? phaseOfStep(current.id) : null;
  const at = state.pabcd!.phase;
  if (to === null || to === at) return;
  const from = storedPhase(at);
  if (!isLegalMove(from, to)) refuse(`illegal transition ${from}->${to}`);
  emitMove(ctx, {
    ...rowFor(ctx, from, to, who),
    from,
    ...(to === 'D' ? { to: 'IDLE', reason: 'done' } : { to }),
  });
}

/** The actor, reason and evidence of a move, checking its gate. */
function rowFor(
  ctx: DecideContext,
  from: Phase,
  to: Phase,
  who: Pick<PhaseMove, 'actor' | 'reason' | 'by'>,
): Omit<PhaseMove, 'at' | 'from' | 'to'> {
  const gate = gateOf(from, to);
  const left = ctx.state.steps.find((s) => phaseOfStep(s.id) === from && s.status !== 'pending');
  const attest = left?.directive?.attest;
  if (gate === null) return { ...who, ...(attest?.did && { evidence: attest.did }) };
  const override = approvedGate(ctx);
  if (override?.gate === gate) {
    return {
      ...who,
      override: true,
      evidence: override.reason,
      ...(gate === 'interview' && { scanEvidence: scanEvidenceOf(attest) }),
    };
  }
  const problem = gateProblem(gate, attest);
  if (problem !== null) {
    refuse(`${GATE_LABELS[gate]} gate ${from}->${to} is closed: ${problem}`);
  }
  return { ...who, ...(attest?.did && { evidence: attest.did }) };
}
