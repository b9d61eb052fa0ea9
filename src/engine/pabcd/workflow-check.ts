/**
 * The start check of a codexclaw-layout run: its workflow must be a PABCD cycle. Apart from the
 * rest of decide's PABCD rules so the codexclaw module, which the CLI reads at start-up, stays light.
 */
import type { StartCommand } from '../commands.ts';
import { isLegalMove, type Phase, phaseOfStep, storedPhase } from './phases.ts';

/** Why a codexclaw-layout workflow is not a PABCD cycle (step ids name phases), or null. */
export function phaseWorkflowProblem(c: StartCommand): string | null {
  const wf = c.workflow;
  let previous: Phase = 'IDLE';
  for (const step of wf.steps) {
    const phase = phaseOfStep(step.id);
    if (phase === null) {
      return `workflow ${wf.id}: step ${step.id} is not a PABCD phase (the codexclaw layout needs steps I, P, A, B, C, D or interview, plan, audit, build, check, done)`;
    }
    if (!isLegalMove(storedPhase(previous), phase)) {
      return `workflow ${wf.id}: step ${step.id} cannot follow ${previous} (illegal transition ${previous}->${phase})`;
    }
    const back = step.loop ? phaseOfStep(step.loop.backTo) : null;
    if (back !== null && !isLegalMove(phase, back)) {
      return `workflow ${wf.id}: step ${step.id} loops to ${step.loop?.backTo} (illegal transition ${phase}->${back})`;
    }
    previous = phase;
  }
  return null;
}
